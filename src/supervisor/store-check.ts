import type { StoreVerdict } from '../contracts/readiness.js';
import type { StorePing } from '../store/volume.js';
import type { Logger } from '../shared/logger.js';

/** How long a verdict stands: a flood of probes costs the store one query per this. */
export const STORE_VERDICT_FRESH_MS = 500;

class NoAnswer extends Error {}

/**
 * Asks the store a cheap query, bounded by `timeoutMs`. Probes share one check: a verdict
 * younger than STORE_VERDICT_FRESH_MS is reused, callers during a check wait on it, and a
 * query still out past its bound is waited on again rather than joined by another, so the
 * store never sees more than one readiness query at a time.
 */
export class StoreCheck {
  private checking: Promise<StoreVerdict> | null = null;
  private pinging: Promise<void> | null = null;
  private last: StoreVerdict | null = null;
  private lastAt = 0;

  constructor(
    private readonly store: StorePing,
    readonly timeoutMs: number,
    private readonly log: Pick<Logger, 'warn' | 'info'>,
    private readonly freshMs = STORE_VERDICT_FRESH_MS,
  ) {}

  /** The latest verdict, null before the first check ended. */
  latest(): StoreVerdict | null {
    return this.last;
  }

  check(): Promise<StoreVerdict> {
    if (this.last !== null && Date.now() - this.lastAt < this.freshMs) return Promise.resolve(this.last);
    return (this.checking ??= this.run().finally(() => (this.checking = null)));
  }

  private async run(): Promise<StoreVerdict> {
    const t0 = performance.now();
    let timer: NodeJS.Timeout | undefined;
    let verdict: StoreVerdict;
    this.pinging ??= this.store.ping().finally(() => (this.pinging = null));
    try {
      await Promise.race([this.pinging, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new NoAnswer()), this.timeoutMs)))]);
      const ms = Math.round(performance.now() - t0);
      // A synchronous store (SQLite) cannot be cut short: one that answered late is as not ready.
      verdict = ms <= this.timeoutMs ? { ok: true, ms } : { ok: false, ms, detail: `answered in ${ms} ms, over the ${this.timeoutMs} ms bound` };
    } catch (err) {
      const ms = Math.round(performance.now() - t0);
      // The cause may name hosts: it goes to the log, the unauthenticated answer says only what failed.
      verdict = { ok: false, ms, detail: err instanceof NoAnswer ? `no answer within ${this.timeoutMs} ms` : 'the query failed' };
      if (this.last?.ok !== false) this.log.warn({ cause: (err as Error).message, detail: verdict.detail }, 'readiness: the store is not ready');
    } finally {
      clearTimeout(timer);
    }
    if (verdict.ok && this.last?.ok === false) this.log.info({ ms: verdict.ms }, 'readiness: the store answers again');
    this.last = verdict;
    this.lastAt = Date.now();
    return verdict;
  }
}
