/**
 * A token bucket: `capacity` tokens, refilled continuously at `rate` per second.
 * Pure: the caller passes the clock, so tests can drive time.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly rate: number,
    readonly capacity: number,
    now: number,
  ) {
    this.tokens = capacity;
    this.last = now;
  }

  private refill(now: number): void {
    if (now > this.last) {
      this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * this.rate);
      this.last = now;
    }
  }

  available(now: number): number {
    this.refill(now);
    return Math.floor(this.tokens);
  }

  /** Takes up to `n` whole tokens; returns how many were taken. */
  take(n: number, now: number): number {
    this.refill(now);
    const got = Math.min(n, Math.floor(this.tokens));
    this.tokens -= got;
    return got;
  }

  /** Puts back `n` tokens taken earlier and not spent (never above capacity). */
  giveBack(n: number, now: number): void {
    this.refill(now);
    this.tokens = Math.min(this.capacity, this.tokens + n);
  }

  /** Milliseconds until one whole token is available (0 if one is now). */
  msUntilToken(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.rate) * 1000);
  }
}
