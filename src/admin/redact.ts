import { hasValidChecksum, redactSubKeys } from './keys/key-format.js';
import type { Params } from './op-router.js';

/** What stands in a log line or an audit entry for anything that is or looks like a token. */
export const REDACTED_TOKEN = '[redacted token]';

const KEY_ID = /^key_[0-9A-Za-z]{16}$/;
const BASE64ISH = /^[A-Za-z0-9+/=_-]{24,}$/;
const HEX = /^[0-9A-Fa-f]{32,}$/;

/**
 * Shaped like a random secret: 24+ characters of base64/base64url that mix upper case,
 * lower case and digits, or 32+ hex digits with both digits and letters. Entity names
 * in kebab-case and key ids (`key_…`) do not match.
 */
export function looksLikeToken(s: string): boolean {
  if (s.length < 24 || KEY_ID.test(s) || !BASE64ISH.test(s)) return false;
  if (HEX.test(s)) return /[0-9]/.test(s) && /[A-Fa-f]/.test(s);
  return /[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s);
}

/**
 * The parts of a value a token may stand in with something around it (`Bearer <token>`,
 * a pasted line end, `x.<token>`): runs of base64/base64url characters long enough to be one.
 */
function pieces(s: string): string[] {
  const parts = s.split(/[^A-Za-z0-9+/=_-]+/);
  return parts.length > 1 ? parts.filter((x) => x.length >= 16) : [];
}

/**
 * Keeps bearer tokens out of what the admin port logs, audits and stores when a client
 * pastes one where an id goes: a known system key's token (compared by its digest),
 * anything shaped like a sub-key, or anything shaped like a random secret.
 */
export class Redactor {
  constructor(private readonly isSystemToken: (s: string) => boolean = () => false) {}

  /** A token that would authenticate: a system key's, or a sub-key (shape and checksum). */
  isBearerToken(s: string): boolean {
    const bearer = (x: string) => hasValidChecksum(x) || this.isSystemToken(x);
    return bearer(s) || pieces(s).some(bearer);
  }

  /** One decoded value (a path parameter, an audit target part). */
  value(s: string): string {
    const sub = redactSubKeys(s);
    if (sub !== s) return sub;
    const secret = (x: string) => this.isSystemToken(x) || looksLikeToken(x);
    return secret(s) || pieces(s).some(secret) ? REDACTED_TOKEN : s;
  }

  /** A raw request path, judged one segment at a time (each as sent and percent-decoded). */
  path(p: string): string {
    return p
      .split('/')
      .map((seg) => {
        if (seg === '') return seg;
        let decoded = seg;
        try {
          decoded = decodeURIComponent(seg);
        } catch {
          // judged as sent
        }
        const r = this.value(decoded);
        return r === decoded ? (seg === decoded ? seg : this.value(seg)) : r;
      })
      .join('/');
  }

  /** Path parameters, each redacted: what the audit entry is built from. */
  params(params: Params): Params {
    const out: Params = {};
    for (const [k, v] of Object.entries(params)) out[k] = this.value(v);
    return out;
  }
}
