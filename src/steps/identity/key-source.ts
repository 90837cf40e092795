import * as v from 'valibot';
import { keySourceId, type KeySourceSpec } from '../../contracts/key-sets.js';

/**
 * jwt-auth's remote key source: a JWKS URL, or an issuer whose JWKS OpenID discovery finds,
 * fetched by the supervisor (supervisor/key-sets/) and pushed to the workers.
 */

const HttpUrl = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.check(isHttpUrl, 'must be an http(s) URL without credentials'),
);

export const KeySourceFields = {
  /** The JWKS to fetch (instead of inline `jwks`, or of discovery from `issuer`). */
  jwksUri: v.optional(HttpUrl),
  /** At most one fetch per this many seconds, however many unknown `kid`s workers meet. */
  minRefreshSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3600)), 30),
  /** The last good keys serve this long after the last successful fetch while the provider cannot be reached. */
  maxStaleSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(7 * 86_400)), 21_600),
};

export interface KeySourceSettings {
  algorithms: readonly string[];
  jwks?: unknown;
  jwksUri?: string | undefined;
  issuer?: string | undefined;
  minRefreshSeconds: number;
  maxStaleSeconds: number;
}

/** Algorithms verified with a public key (the others, HS256, with a shared secret). */
export const usesPublicKeys = (algorithms: readonly string[]): boolean => algorithms.some((a) => a !== 'HS256');

/** An issuer given without `jwks` or `jwksUri`, for public-key algorithms, is where the keys are discovered. */
export function discovers(s: KeySourceSettings): boolean {
  return usesPublicKeys(s.algorithms) && s.jwks === undefined && s.jwksUri === undefined && s.issuer !== undefined;
}

/** Whether a string is an http(s) URL the supervisor may fetch. */
export function isHttpUrl(s: string): boolean {
  if (!URL.canParse(s)) return false;
  const u = new URL(s);
  return /^https?:$/.test(u.protocol) && u.username === '' && u.password === '';
}

/** The source the supervisor fetches for these settings of `tenant`'s step; null: keys inline (or none). */
export function remoteKeySource(s: KeySourceSettings, tenant: string): KeySourceSpec | null {
  const [kind, url] = s.jwksUri !== undefined ? (['jwks', s.jwksUri] as const) : discovers(s) ? (['issuer', s.issuer!] as const) : [null, null];
  if (kind === null) return null;
  return { id: keySourceId(tenant, kind, url), tenant, kind, url, minRefreshSeconds: s.minRefreshSeconds, maxStaleSeconds: s.maxStaleSeconds };
}

/** The URLs the supervisor will fetch, for the upstream allow-list (StepDefinition.urlRefs). */
export function keySourceUrls(s: KeySourceSettings): { pointer: string; url: string }[] {
  if (s.jwksUri !== undefined) return [{ pointer: '/jwksUri', url: s.jwksUri }];
  return discovers(s) ? [{ pointer: '/issuer', url: s.issuer! }] : [];
}
