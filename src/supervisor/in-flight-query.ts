import type { WorkerPool } from './worker-pool.js';

/** How long an admin call waits for the workers' counts: a worker that has not answered by then counts 0. */
const ANSWER_WITHIN_MS = 500;

/**
 * Requests in flight per target of a cluster, node-wide: the counts live in each worker
 * (its own connections), so the supervisor asks every listening worker and sums the
 * answers. Asked per admin call only; the data path never waits on it.
 */
export class InFlightQuery {
  private nextId = 1;
  private readonly waiting = new Map<number, (counts: Record<string, number>) => void>();

  constructor(private readonly pool: WorkerPool) {
    pool.onWorkerMessage((_slot, msg) => {
      if (msg.type === 'in-flight') this.waiting.get(msg.id)?.(msg.counts);
    });
  }

  /** Per target address of `cluster` (`tenant/name`), the sum over the workers that answered in time. */
  ask(cluster: string): Promise<Record<string, number>> {
    const workers = this.pool.live();
    const total: Record<string, number> = {};
    if (workers.length === 0) return Promise.resolve(total);
    const id = this.nextId++;
    return new Promise((resolve) => {
      let left = workers.length;
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(total);
      };
      const timer = setTimeout(done, ANSWER_WITHIN_MS);
      this.waiting.set(id, (counts) => {
        for (const [target, n] of Object.entries(counts)) total[target] = (total[target] ?? 0) + n;
        if (--left === 0) done();
      });
      for (const w of workers) this.pool.send(w, { type: 'in-flight', id, cluster });
    });
  }
}
