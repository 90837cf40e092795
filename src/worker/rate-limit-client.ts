import type { RateLimitClient, RateLimitDenied } from '../steps/step.js';
import type { FromWorker } from '../contracts/ipc.js';

type Verdict = true | RateLimitDenied;

interface Local {
  tokens: number;
  /** The supervisor's count after the last lease (tokens not leased to anyone). */
  pool: number;
  /** Leased tokens are used soon or dropped, so an idle worker does not sit on them. */
  expires: number;
  deniedUntil: number;
  /** The denial is the store's (a cluster bucket with onStoreDown deny), not an empty bucket. */
  unavailable: boolean;
  /** The tokens held did not come from the store (Redis down, onStoreDown allow): dropped at lapse, never given back. */
  unbacked: boolean;
  /** Fleet-wide (Redis) and what to do without it; undefined: node-wide. */
  cluster: { onStoreDown: 'allow' | 'deny' } | undefined;
  /** The size of the last grant: 1 means the bucket is near empty. */
  lastGrant: number;
  /** A lease request is on its way: every other request of this bucket waits for it. */
  asking: boolean;
  waiters: ((v: Verdict) => void)[] | null;
}

const LEASE_TTL_MS = 1000;
/** Above this many buckets a new one first sweeps out the idle ones. */
const SWEEP_AT = 10_000;
/** A lease answer that has not come by then is treated as a refusal (never a hang). */
const ANSWER_TIMEOUT_MS = 2000;
/** A bucket in steady use asks for its next lease this long before the current one lapses. */
const RENEW_AHEAD_MS = 250;

/**
 * The worker's side of the node-wide buckets: spends tokens leased from the supervisor
 * synchronously, and asks for more over IPC only when it has none. At most one lease
 * request per bucket is in flight: requests that arrive meanwhile queue on it, and the
 * grant is shared among them in arrival order, so a burst does not split the bucket
 * into ever smaller leases. A denial is cached until the bucket refills,
 * so a flood of over-limit requests does not flood the IPC either.
 */
export class LeasedRateLimits implements RateLimitClient {
  private readonly local = new Map<string, Local>();
  private readonly waiting = new Map<number, (r: { granted: number; retryAfterMs: number; remaining: number; unavailable: boolean; unbacked: boolean }) => void>();
  private nextId = 1;

  constructor(
    private readonly send: (msg: FromWorker) => void,
    private readonly answerTimeoutMs = ANSWER_TIMEOUT_MS,
  ) {}

  acquire(bucket: string, rps: number, burst: number, cluster?: { onStoreDown: 'allow' | 'deny' }): Verdict | Promise<Verdict> {
    const now = performance.now();
    let l = this.local.get(bucket);
    if (!l) {
      // Per-client keys: forget idle ones first, and bound the count whatever happens.
      if (this.local.size >= SWEEP_AT) this.sweep(now);
      if (this.local.size >= 100_000) this.local.clear();
      this.local.set(bucket, (l = { tokens: 0, pool: 0, expires: 0, deniedUntil: 0, unavailable: false, unbacked: false, cluster, lastGrant: 0, asking: false, waiters: null }));
    }
    if (l.tokens > 0 && now < l.expires) {
      l.tokens--;
      // Renew a busy bucket before its lease lapses, so its requests never wait on IPC.
      // Not near empty (grants of 1): there every token is handed out one by one.
      if (!l.asking && l.lastGrant > 1 && l.expires - now < RENEW_AHEAD_MS) this.ask(l, bucket, rps, burst);
      return true;
    }
    if (now < l.deniedUntil) return denial(l, now);
    const entry = l;
    return new Promise((resolve) => {
      (entry.waiters ??= []).push(resolve);
      if (!entry.asking) this.ask(entry, bucket, rps, burst);
    });
  }

  /** Drops buckets with nothing pending: lease lapsed, no denial running, nobody waiting. */
  private sweep(now: number): void {
    for (const [k, l] of this.local) if (!l.asking && l.waiters === null && now >= l.expires && now >= l.deniedUntil) this.local.delete(k);
  }

  remaining(bucket: string): number {
    const l = this.local.get(bucket);
    return l ? l.pool + l.tokens : 0;
  }

  /** The supervisor's answer to a lease. */
  answer(id: number, granted: number, retryAfterMs: number, remaining: number, unavailable = false, unbacked = false): void {
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    w({ granted, retryAfterMs, remaining, unavailable, unbacked });
  }

  private ask(l: Local, bucket: string, rps: number, burst: number): void {
    l.asking = true;
    const id = this.nextId++;
    // The requests of this bucket all wait on this one answer: if it is lost, they are
    // refused for a second instead of waiting forever.
    const lost = setTimeout(() => this.answer(id, 0, 1000, l.pool), this.answerTimeoutMs);
    this.waiting.set(id, ({ granted, retryAfterMs, remaining, unavailable, unbacked }) => {
      clearTimeout(lost);
      l.asking = false;
      const at = performance.now();
      const kept = at < l.expires ? l.tokens : 0;
      l.pool = remaining;
      if (granted > 0) {
        // Kept tokens mixed with unbacked ones count as unbacked: none of them goes back.
        l.unbacked = unbacked || (kept > 0 && l.unbacked);
        l.tokens = kept + granted;
        l.expires = at + LEASE_TTL_MS;
        l.lastGrant = granted;
      } else {
        l.tokens = kept;
        if (kept === 0) {
          l.deniedUntil = at + retryAfterMs;
          l.unavailable = unavailable;
        }
      }
      const queued = l.waiters;
      l.waiters = null;
      if (queued === null) return;
      for (const resolve of queued) {
        if (l.tokens > 0) {
          l.tokens--;
          resolve(true);
        } else if (at < l.deniedUntil) resolve(denial(l, at));
        else (l.waiters ??= []).push(resolve); // the grant ran out before this one: ask again
      }
      if (l.waiters !== null) this.ask(l, bucket, rps, burst);
    });
    // Tokens of a lapsed lease go back to the bucket with this request: dropped, they
    // drained the node's bucket under light traffic (a quarter of it per lapse).
    let returned = 0;
    if (l.tokens > 0 && performance.now() >= l.expires) {
      returned = l.unbacked ? 0 : l.tokens;
      l.tokens = 0;
    }
    this.send({ type: 'lease', id, bucket, rps, burst, returned, ...(l.cluster ? { cluster: l.cluster } : {}) });
  }
}

function denial(l: Local, now: number): RateLimitDenied {
  const d: RateLimitDenied = { ok: false, retryAfterSeconds: (l.deniedUntil - now) / 1000 };
  if (l.unavailable) d.unavailable = true;
  return d;
}
