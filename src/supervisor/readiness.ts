import type { WorkerState } from '../contracts/node-status.js';
import type { StoreCheck } from './store-check.js';
import type { ReadinessReport, StoreVerdict, WorkersVerdict } from '../contracts/readiness.js';

/** What readiness reads of a worker slot. */
export interface SlotView {
  slot: number;
  state: WorkerState;
  /** The generation the worker acknowledged (or was started with). */
  generation: number;
}


/** Why a worker does not serve the current generation, or null when it does. */
function notReady(s: SlotView, generation: number): string | null {
  if (s.state === 'starting') return `worker ${s.slot} starting`;
  if (s.state === 'exited') return `worker ${s.slot} exited, respawning`;
  if (s.state === 'draining') return `worker ${s.slot} draining`;
  if (s.generation !== generation) return `worker ${s.slot} loading generation ${generation}`;
  return null;
}

/** Ready when every worker listens and has acknowledged the node's current generation. */
export function workersVerdict(slots: readonly SlotView[], generation: number): WorkersVerdict {
  const why = slots.map((s) => notReady(s, generation)).filter((w): w is string => w !== null);
  const verdict: WorkersVerdict = { ok: why.length === 0 && slots.length > 0, ready: slots.length - why.length, total: slots.length, generation };
  if (slots.length === 0) verdict.detail = 'no worker started yet';
  else if (why.length > 0) verdict.detail = why.join('; ');
  return verdict;
}

/**
 * The node's readiness: its workers (read from the pool, at once) and its store (StoreCheck,
 * bounded and shared by concurrent probes).
 */
export class Readiness {
  constructor(
    private readonly slots: () => readonly SlotView[],
    private readonly generation: () => number,
    readonly store: StoreCheck,
  ) {}

  /** The workers as they are now. */
  workers(): WorkersVerdict {
    return workersVerdict(this.slots(), this.generation());
  }

  /** The verdict of both parts; the workers are read once the store has answered, so neither is stale. */
  async check(): Promise<ReadinessReport> {
    return report(this.workers(), await this.store.check());
  }

  /**
   * /readyz's verdict at once, never waiting on the store: the workers now and the store's
   * latest verdict (a check still within its bound leaves the previous one standing; before
   * the first, not ready). Starts the next check, shared with every caller (one query at a
   * time, a verdict reused for STORE_VERDICT_FRESH_MS), so the verdict follows the probes.
   */
  latest(): ReadinessReport {
    void this.store.check();
    return report(this.workers(), this.store.latest() ?? { ok: false, ms: 0, detail: 'store not checked yet' });
  }

  /** From the latest store verdict without waiting (the data-port path's pushes); not ready before the first one. */
  now(): boolean {
    return this.workers().ok && this.store.latest()?.ok === true;
  }
}

const report = (workers: WorkersVerdict, store: StoreVerdict): ReadinessReport => ({ ready: workers.ok && store.ok, checks: { workers, store } });
