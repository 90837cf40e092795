import { createHash } from 'node:crypto';
import type { TokenEndpointResponse, TokenEndpointResponseHelpers } from 'openid-client';
import type { OidcLoginSettings } from './oidc-login-settings.js';
import { MAX_COOKIE_BYTES, type SealedCookie } from './sealed-cookie.js';

/** What the session cookie holds: no access token (the upstream is not given one). */
export interface Session {
  /** The subject. */
  s: string;
  /** The claims the step maps or requires (and `scope` when scopes are required). */
  c: Record<string, unknown>;
  /** When the tokens expire (epoch seconds): refreshed `refreshBeforeSeconds` before. */
  x: number;
  /** When the session ends whatever the refreshes (epoch seconds). */
  m: number;
  /** The refresh token, when the provider gave one. */
  r?: string;
  /** The ID token, for the logout's id_token_hint, when it fits in the cookie. */
  i?: string;
}

export type Tokens = TokenEndpointResponse & TokenEndpointResponseHelpers;

/**
 * Sessions made from token responses and kept in a sealed cookie. `kept`: the claims the
 * step maps or requires, the only ones stored, so the cookie stays small.
 */
export class Sessions {
  constructor(
    readonly cookie: SealedCookie<Session>,
    private readonly kept: readonly string[],
    private readonly maxAgeSeconds: number,
  ) {}

  /**
   * The session a token response starts (sign-in) or continues (refresh: `previous`, whose
   * subject, end and refresh token carry over unless the answer replaces them). Null when
   * the ID token names another subject than the session's.
   */
  fromTokens(tokens: Tokens, now: number, previous?: Session): Session | null {
    const idClaims = tokens.claims() as Record<string, unknown> | undefined;
    const sub = typeof idClaims?.sub === 'string' ? idClaims.sub : previous?.s;
    if (sub === undefined || (previous !== undefined && sub !== previous.s)) return null;
    const all: Record<string, unknown> = { ...(previous?.c ?? {}), ...(idClaims ?? {}), ...(tokens.scope !== undefined ? { scope: tokens.scope } : {}) };
    const c: Record<string, unknown> = {};
    for (const name of this.kept) if (all[name] !== undefined) c[name] = all[name];
    const expiresIn = tokens.expiresIn();
    const idExp = typeof idClaims?.exp === 'number' ? idClaims.exp : undefined;
    const m = previous?.m ?? now + this.maxAgeSeconds;
    const x = Math.min(m, expiresIn !== undefined ? now + expiresIn : (idExp ?? now + 300));
    const r = tokens.refresh_token ?? previous?.r;
    const i = tokens.id_token ?? previous?.i;
    return { s: sub, c, x, m, ...(r !== undefined ? { r } : {}), ...(i !== undefined ? { i } : {}) };
  }

  /**
   * The sealed cookie value, under MAX_COOKIE_BYTES: without the ID token when it does not
   * fit (logout then names the client instead), without the refresh token as a last
   * resort (no refresh then). Null when even that is too large (too many claims).
   */
  seal(session: Session): { value: string; session: Session } | null {
    const { i: _i, ...withoutId } = session;
    const { r: _r, ...bare } = withoutId;
    for (const candidate of [session, withoutId, bare] as Session[]) {
      const value = this.cookie.seal(candidate, this.cookieExpiry(candidate));
      if (value.length + this.cookie.name.length + 1 <= MAX_COOKIE_BYTES) return { value, session: candidate };
    }
    return null;
  }

  /** The cookie outlives the tokens only when it can refresh them. */
  cookieExpiry(s: Session): number {
    return s.r !== undefined ? s.m : Math.min(s.x, s.m);
  }
}

/** The claims a session keeps: the mapped and required ones, and `scope` when scopes are required. */
export function sessionClaims(s: OidcLoginSettings): string[] {
  const names = new Set([...Object.keys(s.claims), ...Object.keys(s.requiredClaims)]);
  if (s.requiredScopes.length > 0) names.add('scope');
  return [...names];
}

/**
 * What a cookie is bound to: the tenant, the step's place (its bucket up to the code: route
 * and position) and the settings that decide who the session is and what it may do.
 */
export function cookieBinding(s: OidcLoginSettings, tenant: string, bucket: string): string {
  const at = bucket.indexOf(':oidc-login@');
  const place = at >= 0 ? bucket.slice(0, at) : bucket;
  const identity = createHash('sha256')
    .update(JSON.stringify([s.issuer, s.clientId, s.claims, s.requiredClaims, s.requiredScopes]))
    .digest('base64url');
  return `${tenant}\u0000${place}\u0000${identity}`;
}
