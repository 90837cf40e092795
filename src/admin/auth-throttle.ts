import { TokenBucket } from '../shared/token-bucket.js';

export interface AuthThrottleSettings {
  /** Failed authentications an address may make in a burst. */
  burst: number;
  /** How fast the allowance refills (failures per second). */
  perSecond: number;
}

const MAX_ADDRESSES = 10_000;

/**
 * Slows down token guessing: each failed authentication spends one token of the
 * client address's bucket; with the bucket empty, that address gets 429 before its
 * token is even looked at. The address is the socket peer, never a header. Good
 * tokens spend nothing, so a client that authenticates is never slowed.
 */
export class AuthThrottle {
  private readonly buckets = new Map<string, TokenBucket>();
  throttled = 0;
  /** Calls refused 401: no token, or one no key matches (the metric switchyard_admin_auth_failures_total). */
  unauthenticated = 0;

  constructor(
    private readonly settings: AuthThrottleSettings,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Milliseconds this address must wait before it may authenticate again (0: go ahead). */
  waitMs(address: string): number {
    const b = this.buckets.get(address);
    if (!b) return 0;
    const now = this.clock();
    if (b.available(now) >= 1) return 0;
    this.throttled++;
    return b.msUntilToken(now);
  }

  failed(address: string): void {
    const now = this.clock();
    let b = this.buckets.get(address);
    if (!b) {
      if (this.buckets.size >= MAX_ADDRESSES) this.sweep(now);
      b = new TokenBucket(this.settings.perSecond, this.settings.burst, now);
      this.buckets.set(address, b);
    }
    b.take(1, now);
  }

  /** Forgets addresses whose allowance is whole again; if all are busy, starts over. */
  private sweep(now: number): void {
    for (const [k, b] of this.buckets) if (b.available(now) >= b.capacity) this.buckets.delete(k);
    if (this.buckets.size >= MAX_ADDRESSES) this.buckets.clear();
  }
}
