import { TokenBucket } from '../shared/token-bucket.js';

/**
 * Node-wide rate-limit buckets, owned by the supervisor. Workers lease tokens in
 * batches that shrink to one as a bucket empties: a busy route rarely waits on IPC,
 * and near the limit every token is handed out one by one, so the count is exact
 * however many workers there are.
 */
export class RateLimitLeases {
  private readonly buckets = new Map<string, { bucket: TokenBucket; lastUsed: number }>();

  constructor(
    private readonly workers: () => number,
    private readonly clock: () => number = () => performance.now(),
    /** Per-client keys (ip, a header) are the client's to multiply: the count is bounded. */
    private readonly maxBuckets = 200_000,
  ) {}

  get size(): number {
    return this.buckets.size;
  }

  /**
   * Full, idle buckets go first (they hold nothing); if that is not enough, the least
   * recently used tenth. A bucket dropped that way starts again full: under a flood of
   * distinct keys the flood's oldest keys get a fresh burst, busy buckets keep their
   * count, and the supervisor's memory stays bounded.
   */
  private makeRoom(now: number): void {
    this.sweep(1_000, now);
    let drop = this.buckets.size - Math.floor(this.maxBuckets * 0.9);
    if (drop <= 0) return;
    for (const k of this.buckets.keys()) {
      this.buckets.delete(k);
      if (--drop === 0) break;
    }
  }

  /** `returned`: unspent tokens of the asking worker's lapsed lease, credited first. */
  lease(key: string, rps: number, burst: number, returned = 0): { granted: number; retryAfterMs: number; remaining: number } {
    const now = this.clock();
    let entry = this.buckets.get(key);
    if (!entry) {
      if (this.buckets.size >= this.maxBuckets) this.makeRoom(now);
      entry = { bucket: new TokenBucket(rps, burst, now), lastUsed: now };
    } else this.buckets.delete(key);
    // Kept in order of last use (a Map iterates in insertion order): makeRoom drops the
    // least recently used, never a route-wide bucket in steady use.
    this.buckets.set(key, entry);
    entry.lastUsed = now;
    if (returned > 0) entry.bucket.giveBack(returned, now);
    const available = entry.bucket.available(now);
    // A quarter of a fair share per worker: large batches while plenty is left, one token near empty.
    const batch = Math.max(1, Math.floor(available / (4 * Math.max(1, this.workers()))));
    const granted = entry.bucket.take(batch, now);
    return { granted, retryAfterMs: granted > 0 ? 0 : entry.bucket.msUntilToken(now), remaining: entry.bucket.available(now) };
  }

  /** Forgets buckets unused for `idleMs` (a full bucket carries no state worth keeping). */
  sweep(idleMs: number, now = this.clock()): void {
    for (const [k, e] of this.buckets) if (now - e.lastUsed > idleMs && e.bucket.available(now) >= e.bucket.capacity) this.buckets.delete(k);
  }
}
