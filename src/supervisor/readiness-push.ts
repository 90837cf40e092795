import type { Worker } from 'node:cluster';
import type { Readiness } from './readiness.js';
import type { WorkerPool } from './worker-pool.js';

/** How often the store is asked: /readyz reads the latest verdict and never waits for one. */
export const READINESS_REFRESH_MS = 1_000;

/**
 * Keeps the workers' readiness (worker.json `readiness.dataPath`) in step with the node's:
 * re-judged when a worker changes state (a drain included) or acknowledges a generation, when a generation
 * starts being served, and after each store check; a worker is sent the verdict only when
 * it differs from the last one it was sent, so a steady node sends nothing.
 */
export class ReadinessPush {
  private readonly told = new WeakMap<Worker, boolean>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly readiness: Readiness,
    private readonly pool: WorkerPool,
  ) {}

  start(): void {
    this.pool.onChange(() => this.push());
    const refresh = () => void this.readiness.store.check().then(() => this.push());
    this.timer = setInterval(refresh, READINESS_REFRESH_MS);
    this.timer.unref();
    refresh();
  }

  push(): void {
    const ready = this.readiness.now();
    // Draining workers too: they answer the data path on open connections until they exit.
    for (const s of this.pool.answering()) {
      const w = s.worker!;
      if (this.told.get(w) === ready) continue;
      this.told.set(w, ready);
      this.pool.send(s, { type: 'readiness', ready });
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
