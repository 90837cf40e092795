import type { JWTPayload } from 'jose';

/** Longer Authorization values are verified every time: a tenant's own large tokens cannot fill a worker's memory. */
export const MAX_CACHED_TOKEN = 4096;

interface Entry {
  payload: JWTPayload;
  untilMs: number;
  version: number;
  /** Used since it was last passed over by eviction (the clock algorithm's reference bit). */
  used: boolean;
}

/**
 * Tokens a step verified lately, by the token string: a client sending the same token again
 * costs no signature check. Bounded, evicting by the clock algorithm (an approximate least
 * recently used: a hit only marks its entry, so it costs no reordering); an entry serves
 * only until the token's `exp` (with the step's clock skew) and only for the key set version
 * it was verified with, so a rotation or an expired key set re-verifies every token. Only
 * tokens up to MAX_CACHED_TOKEN characters are kept, each with only the claims the step reads.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, Entry>();

  constructor(
    /** The claims kept of a payload (the others are not read after verification). */
    private readonly kept: readonly string[],
    private readonly max = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(token: string, version: number): JWTPayload | undefined {
    const e = this.entries.get(token);
    if (e === undefined) return undefined;
    if (e.version !== version || this.now() >= e.untilMs) {
      this.entries.delete(token);
      return undefined;
    }
    e.used = true;
    return e.payload;
  }

  /** `untilMs`: when the token stops passing (its exp plus the clock skew). */
  set(token: string, payload: JWTPayload, untilMs: number, version: number): void {
    if (token.length > MAX_CACHED_TOKEN) return;
    if (!this.entries.has(token) && this.entries.size >= this.max) this.evictOne();
    const claims: JWTPayload = {};
    for (const name of this.kept) if (Object.hasOwn(payload, name) && payload[name] !== undefined) claims[name] = payload[name];
    this.entries.set(token, { payload: claims, untilMs, version, used: false });
  }

  get size(): number {
    return this.entries.size;
  }

  /** The oldest entry not used since it was last passed over goes; used ones move to the back, unmarked. */
  private evictOne(): void {
    for (const [token, e] of this.entries) {
      this.entries.delete(token);
      if (!e.used) return;
      e.used = false;
      this.entries.set(token, e);
    }
  }
}
