import type { TargetUpstream } from './target-upstream.js';

/** How often a removed target's pool is looked at until its requests ended. */
const DRAIN_POLL_MS = 100;

/**
 * Closes the pool of a target a DNS name no longer gives once nothing is in flight or
 * waiting on it: closing at once would refuse the requests queued for one of its
 * connections. Every such request has its own deadline, so the wait ends.
 */
export function closeWhenDrained(pool: TargetUpstream): void {
  if (pool.busy === 0) return void pool.close().catch(() => undefined);
  const timer = setInterval(() => {
    if (pool.busy !== 0) return;
    clearInterval(timer);
    void pool.close().catch(() => undefined);
  }, DRAIN_POLL_MS);
  timer.unref();
}
