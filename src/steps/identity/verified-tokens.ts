import type { JWTPayload } from 'jose';

/**
 * Tokens a step verified lately, by the token string: a client sending the same token again
 * costs no signature check. Bounded (least recently used out first); an entry serves only
 * until the token's `exp` (with the step's clock skew) and only for the key set version it
 * was verified with, so a rotation or an expired key set re-verifies every token.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, { payload: JWTPayload; untilMs: number; version: number }>();

  constructor(
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
    // Most recently used last: eviction takes the first.
    this.entries.delete(token);
    this.entries.set(token, e);
    return e.payload;
  }

  /** `untilMs`: when the token stops passing (its exp plus the clock skew). */
  set(token: string, payload: JWTPayload, untilMs: number, version: number): void {
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token, { payload, untilMs, version });
  }

  get size(): number {
    return this.entries.size;
  }
}
