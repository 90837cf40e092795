import type { ServedGeneration } from '../contracts/ipc.js';
import type { Runtime } from './runtime.js';

/**
 * The generations a worker still serves: the current one, and each replaced one until its
 * last request ended (a request keeps the runtime it started on). `switchyard status`
 * shows them, so an operator sees an old generation drain away after a publish.
 */
export class ServedGenerations {
  /** Replaced runtimes with requests in flight, oldest first; each leaves when drained. */
  private readonly replaced = new Set<Runtime>();

  /** `prev` was replaced: it closes its pools, and leaves the list, once its last request ended. */
  retire(prev: Runtime): void {
    this.replaced.add(prev);
    prev.retire(() => this.replaced.delete(prev));
  }

  /** The current generation first, then the replaced ones, newest first. */
  list(current: Runtime | null): ServedGeneration[] {
    const served = [...this.replaced].reverse();
    if (current) served.unshift(current);
    return served.map((r) => ({ generation: r.generation, inFlight: r.requestsInFlight() }));
  }
}
