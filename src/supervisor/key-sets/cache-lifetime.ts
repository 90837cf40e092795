/**
 * How long a fetched key set is used before the supervisor fetches it again: what the
 * answer's caching headers say (RFC 9111: Cache-Control max-age, less Age; else Expires
 * less Date), within bounds. The lower bound is the source's minRefreshSeconds (a provider
 * asking for no caching is not fetched per request); the upper one is an hour, and half of
 * maxStaleSeconds, so a provider that went away is noticed, and retried, before the keys expire.
 */

/** Used when the answer has no caching headers. */
export const KEY_CACHE_DEFAULT_SECONDS = 300;
/** The longest a key set is kept without asking again, whatever the headers say. */
export const KEY_CACHE_MAX_SECONDS = 3_600;

export interface CachingHeaders {
  cacheControl?: string | undefined;
  expires?: string | undefined;
  date?: string | undefined;
  age?: string | undefined;
}

/** Seconds the headers allow the answer to be reused (null: they do not say). */
export function headerLifetimeSeconds(h: CachingHeaders, nowMs: number): number | null {
  if (h.cacheControl !== undefined) {
    const directives = h.cacheControl.toLowerCase().split(',').map((d) => d.trim());
    if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0;
    const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)).find((m) => m !== null);
    if (maxAge) {
      const age = h.age !== undefined && /^\d+$/.test(h.age.trim()) ? Number(h.age.trim()) : 0;
      return Math.max(0, Number(maxAge[1]) - age);
    }
  }
  if (h.expires !== undefined) {
    const expires = Date.parse(h.expires);
    // An invalid Expires (e.g. "0") means already expired (RFC 9111 §5.3).
    if (Number.isNaN(expires)) return 0;
    const date = h.date !== undefined ? Date.parse(h.date) : Number.NaN;
    return Math.max(0, Math.floor((expires - (Number.isNaN(date) ? nowMs : date)) / 1000));
  }
  return null;
}

/** The headers' lifetime (or the default), clamped to [minRefreshSeconds, min(an hour, maxStaleSeconds / 2)]. */
export function keySetLifetimeSeconds(h: CachingHeaders, nowMs: number, minRefreshSeconds: number, maxStaleSeconds: number): number {
  const said = headerLifetimeSeconds(h, nowMs) ?? KEY_CACHE_DEFAULT_SECONDS;
  const upper = Math.max(minRefreshSeconds, Math.min(KEY_CACHE_MAX_SECONDS, Math.floor(maxStaleSeconds / 2)));
  return Math.min(upper, Math.max(minRefreshSeconds, said));
}
