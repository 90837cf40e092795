import type { WorkerLoad } from '../contracts/ipc.js';
import type { WorkerPool } from './worker-pool.js';

/** How long cluster status waits for the workers: one that has not answered by then is shown without its load. */
const ANSWER_WITHIN_MS = 500;

/**
 * Each worker's open connections and the generations it still serves, with their
 * requests in flight: the counts live in the workers, so the supervisor asks every
 * listening worker per admin call. The data path never waits on it.
 */
export class WorkerLoadQuery {
  private nextId = 1;
  private readonly waiting = new Map<number, (slot: number, load: WorkerLoad) => void>();

  constructor(private readonly pool: WorkerPool) {
    pool.onWorkerMessage((slot, msg) => {
      if (msg.type === 'status') this.waiting.get(msg.id)?.(slot, { connections: msg.connections, generations: msg.generations, ...(msg.heapMb === undefined ? {} : { heapMb: msg.heapMb }) });
    });
  }

  /** By slot, the loads of the workers that answered in time. */
  ask(): Promise<Map<number, WorkerLoad>> {
    const workers = this.pool.live();
    const loads = new Map<number, WorkerLoad>();
    if (workers.length === 0) return Promise.resolve(loads);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(loads);
      };
      const timer = setTimeout(done, ANSWER_WITHIN_MS);
      this.waiting.set(id, (slot, load) => {
        loads.set(slot, load);
        if (loads.size === workers.length) done();
      });
      for (const w of workers) this.pool.send(w, { type: 'status', id });
    });
  }
}
