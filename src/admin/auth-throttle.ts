import { TokenBucket } from '../shared/token-bucket.js';

export interface AuthThrottleSettings {
  /** Failed authentications an address may make in a burst. */
  burst: number;
  /** How fast the allowance refills (failures per second). */
  perSecond: number;
}

const MAX_ADDRESSES = 10_000;
/** Entries looked at per eviction: keeps a failure O(1) however many addresses are throttled. */
const EVICTION_SCAN = 16;

/**
 * Slows down token guessing: each failed authentication spends one token of the
 * client address's bucket; with the bucket empty, that address gets 429 before its
 * token is even looked at. The address is the socket peer, never a header. Good
 * tokens spend nothing, so a client that authenticates is never slowed.
 *
 * The table holds at most MAX_ADDRESSES addresses, in order of their last failure (a
 * Map re-inserted on touch). A new address makes room by evicting the least recently
 * failed address that is not throttled; a throttled address is never let go early.
 * When no room can be made, addresses without an entry share one overflow bucket, so a
 * flood of addresses slows itself down instead of opening the gate.
 */
export class AuthThrottle {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly overflow: TokenBucket;
  throttled = 0;
  /** Calls refused 401: no token, or one no key matches (the metric switchyard_admin_auth_failures_total). */
  unauthenticated = 0;

  constructor(
    private readonly settings: AuthThrottleSettings,
    private readonly clock: () => number = () => performance.now(),
    private readonly maxAddresses = MAX_ADDRESSES,
  ) {
    this.overflow = new TokenBucket(settings.perSecond, settings.burst, clock());
  }

  /** Milliseconds this address must wait before it may authenticate again (0: go ahead). */
  waitMs(address: string): number {
    const b = this.buckets.get(address) ?? (this.buckets.size >= this.maxAddresses ? this.overflow : undefined);
    if (!b) return 0;
    const now = this.clock();
    if (b.available(now) >= 1) return 0;
    this.throttled++;
    return b.msUntilToken(now);
  }

  failed(address: string): void {
    const now = this.clock();
    let b = this.buckets.get(address);
    if (b) {
      this.buckets.delete(address); // re-inserted last: most recently failed
    } else if (this.buckets.size < this.maxAddresses || this.evictOne(now)) {
      b = new TokenBucket(this.settings.perSecond, this.settings.burst, now);
    } else {
      this.overflow.take(1, now);
      return;
    }
    this.buckets.set(address, b);
    b.take(1, now);
  }

  /**
   * Drops the least recently failed address that may authenticate now. Throttled ones
   * met on the way move to the back, so the next scan looks at other entries.
   */
  private evictOne(now: number): boolean {
    let scanned = 0;
    for (const [k, b] of this.buckets) {
      if (scanned++ >= EVICTION_SCAN) break;
      this.buckets.delete(k);
      if (b.available(now) >= 1) return true;
      this.buckets.set(k, b);
    }
    return false;
  }
}
