import { stringifySetCookie } from 'cookie';
import { SecretBox } from '../../shared/secret-box.js';

/** Browsers keep a cookie's name and value up to 4096 bytes; a little is left for the name. */
export const MAX_COOKIE_BYTES = 4000;

/** `sy1.` and base64url of IV (12) + tag (16) + at least one byte. */
const MIN_SEALED_CHARS = 4 + 39;

/**
 * A value kept in a cookie, encrypted and authenticated (AES-256-GCM, shared/secret-box.ts)
 * with its expiry inside. The associated data binds it to the cookie's name and `binding`
 * (the step's place: tenant, route, settings that decide identity), so a cookie of one
 * route, or another cookie of this one, does not open here.
 */
export class SealedCookie<T> {
  private readonly box: SecretBox;
  private readonly context: string;

  constructor(
    key: Buffer,
    readonly name: string,
    binding: string,
  ) {
    this.box = new SecretBox(key);
    this.context = `switchyard-cookie\u0000${name}\u0000${binding}`;
  }

  /** The sealed text of `value`, valid until `expiresAt` (epoch seconds). */
  seal(value: T, expiresAt: number): string {
    return this.box.seal(JSON.stringify({ e: expiresAt, v: value }), this.context);
  }

  /** The value, or null when absent, altered, sealed under another key or binding, or expired. */
  open(text: string | undefined, now = Date.now() / 1000): T | null {
    // Shorter than a sealed empty value: a truncated GCM tag never gets to be checked.
    if (text === undefined || text.length < MIN_SEALED_CHARS || text.length > MAX_COOKIE_BYTES) return null;
    try {
      const { e, v } = JSON.parse(this.box.open(text, this.context)) as { e: unknown; v: T };
      return typeof e === 'number' && e > now ? v : null;
    } catch {
      return null;
    }
  }
}

export interface CookieScope {
  path: string;
  /** Sent only over TLS: the request came over https, or the step's redirectUri is https. */
  secure: boolean;
}

/** A Set-Cookie line: HttpOnly, SameSite=Lax, Secure as the scope says; `maxAge` 0 clears it. */
export function setCookieLine(name: string, value: string, maxAge: number, scope: CookieScope): string {
  return stringifySetCookie(name, value, {
    httpOnly: true,
    sameSite: 'lax',
    secure: scope.secure,
    path: scope.path,
    maxAge: Math.max(0, Math.floor(maxAge)),
    ...(maxAge <= 0 ? { expires: new Date(0) } : {}),
  });
}
