import type { RateLimitClient, RateLimitDenied } from '../steps/step.js';
import type { FromWorker } from '../shared/ipc.js';

interface Local {
  tokens: number;
  /** The supervisor's count after the last lease (tokens not leased to anyone). */
  pool: number;
  /** Leased tokens are used soon or dropped, so an idle worker does not sit on them. */
  expires: number;
  deniedUntil: number;
}

const LEASE_TTL_MS = 1000;

/**
 * The worker's side of the node-wide buckets: spends tokens leased from the supervisor
 * synchronously, and asks for more over IPC only when it has none. A denial is cached
 * until the bucket refills, so a flood of over-limit requests does not flood the IPC.
 */
export class LeasedRateLimits implements RateLimitClient {
  private readonly local = new Map<string, Local>();
  private readonly waiting = new Map<number, (r: { granted: number; retryAfterMs: number; remaining: number }) => void>();
  private nextId = 1;

  constructor(private readonly send: (msg: FromWorker) => void) {}

  acquire(bucket: string, rps: number, burst: number): true | RateLimitDenied | Promise<true | RateLimitDenied> {
    const now = performance.now();
    let l = this.local.get(bucket);
    if (!l) {
      if (this.local.size >= 100_000) this.local.clear(); // per-client keys: bound the memory
      this.local.set(bucket, (l = { tokens: 0, pool: 0, expires: 0, deniedUntil: 0 }));
    }
    if (l.tokens > 0 && now < l.expires) {
      l.tokens--;
      return true;
    }
    if (now < l.deniedUntil) return { ok: false, retryAfterSeconds: (l.deniedUntil - now) / 1000 };
    const entry = l;
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.waiting.set(id, ({ granted, retryAfterMs, remaining }) => {
        const at = performance.now();
        entry.pool = remaining;
        if (granted > 0) {
          entry.tokens = granted - 1;
          entry.expires = at + LEASE_TTL_MS;
          resolve(true);
        } else {
          entry.deniedUntil = at + retryAfterMs;
          resolve({ ok: false, retryAfterSeconds: retryAfterMs / 1000 });
        }
      });
      this.send({ type: 'lease', id, bucket, rps, burst });
    });
  }

  remaining(bucket: string): number {
    const l = this.local.get(bucket);
    return l ? l.pool + l.tokens : 0;
  }

  /** The supervisor's answer to a lease. */
  answer(id: number, granted: number, retryAfterMs: number, remaining: number): void {
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    w({ granted, retryAfterMs, remaining });
  }
}
