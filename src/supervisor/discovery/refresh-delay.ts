import { DISCOVERY_REFRESH_MAX_S, DISCOVERY_REFRESH_MIN_S, DISCOVERY_RETRY_S } from '../../contracts/discovery.js';

/** When a name's records carry no TTL (node gives none for SRV records themselves, and none for an IP written as an SRV target). */
export const DISCOVERY_NO_TTL_S = 30;

const clamp = (s: number): number => Math.min(DISCOVERY_REFRESH_MAX_S, Math.max(DISCOVERY_REFRESH_MIN_S, s));

/**
 * Seconds until a name is resolved again after an answer: its refreshSeconds as written,
 * else the shortest TTL of the records (an operator's refreshSeconds wins over the TTL), clamped
 * to [DISCOVERY_REFRESH_MIN_S, DISCOVERY_REFRESH_MAX_S]: a TTL of 0 does not make the
 * supervisor ask in a loop, a day's TTL does not keep a dead address for a day.
 */
export function refreshSeconds(written: number | undefined, ttls: readonly number[]): number {
  if (written !== undefined) return clamp(written);
  return clamp(ttls.length ? Math.min(...ttls) : DISCOVERY_NO_TTL_S);
}

/** Seconds until a name whose resolution failed is asked again: sooner than its refresh when that is long. */
export function retrySeconds(written: number | undefined): number {
  return clamp(Math.min(written ?? DISCOVERY_RETRY_S, DISCOVERY_RETRY_S));
}
