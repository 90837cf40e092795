/**
 * Key sets (JWKS) that steps verify tokens against, fetched by the supervisor from a URL a
 * route names (jwt-auth `jwksUri`, or `issuer` by OpenID discovery) and pushed to every
 * worker (docs/architecture.md "Key sets"). Plain JSON: the specs travel in the compiled
 * generation, the sets over IPC.
 */

/** One source of keys, as the compiler lists it in the generation (`keySources`). */
export interface KeySourceSpec {
  /** keySourceId(tenant, kind, url): what workers and the supervisor name it by. */
  id: string;
  /** The tenant whose upstream allow-list every fetch of it goes through. */
  tenant: string;
  /** `jwks`: `url` is the JWKS; `issuer`: `url` is an issuer, its JWKS found by discovery. */
  kind: 'jwks' | 'issuer';
  url: string;
  /** No more than one fetch per this many seconds (a worker meeting an unknown `kid` asks for one). */
  minRefreshSeconds: number;
  /** Past this many seconds after the last successful fetch, the keys are dropped (503). */
  maxStaleSeconds: number;
}

/**
 * A source's state: `pending` (no fetch succeeded yet), `fresh`, `stale` (the last fetch
 * failed, the last good keys still serve), `expired` (stale past maxStaleSeconds: no keys).
 */
export const KEY_SET_STATES = ['pending', 'fresh', 'stale', 'expired'] as const;
export type KeySetState = (typeof KEY_SET_STATES)[number];

/** What a worker holds of a source: the public keys to verify with, and a version that grows with each change. */
export interface KeySetEntry {
  id: string;
  /** Supervisor-wide, increasing: a worker keeps the newest it was sent. */
  version: number;
  state: KeySetState;
  /** The JWKS's keys (public only); empty unless fresh or stale. */
  keys: Record<string, unknown>[];
  /**
   * When the node may fetch the source again (its last fetch + minRefreshSeconds, epoch ms):
   * a worker's refresh cooldown ends then, not a cooldown counted from when it was answered.
   */
  nextFetchAt: number;
}

/** How a fetch ended, for `switchyard_auth_key_fetches_total{result}`. */
export const KEY_FETCH_RESULTS = ['ok', 'error', 'denied'] as const;
export type KeyFetchResult = (typeof KEY_FETCH_RESULTS)[number];

/** A source's id: the tenant (its allow-list applies) and the URL, by kind. */
export function keySourceId(tenant: string, kind: KeySourceSpec['kind'], url: string): string {
  return `${tenant} ${kind} ${url}`;
}

/**
 * The longest a request waits for its source's keys (the first fetch, or a refresh asked
 * for an unknown `kid`) before it is answered: 503 when no keys came, else a verdict on
 * the keys it has.
 */
export const KEY_WAIT_MS = 2_000;
