import { getHeapStatistics } from 'node:v8';
import type { FromWorker } from '../contracts/ipc.js';

const CHECK_EVERY_MS = 1_000;
const MIB = 1024 * 1024;

/** The V8 heap in use (live objects and garbage not yet collected), in MiB. */
export function heapUsedMb(): number {
  return Math.round(getHeapStatistics().used_heap_size / MIB);
}

/**
 * worker.json `limits.workerHeapMb`: once a second (an unref'd timer) the worker compares its
 * heap in use with the bound and, the first time it is past it, tells the supervisor, which
 * replaces it (a new worker first, then this one drains). Told once: the check then stops.
 * Returns the stop.
 */
export function watchHeap(limitMb: number, send: (msg: FromWorker) => void): () => void {
  const timer = setInterval(() => {
    const usedMb = heapUsedMb();
    if (usedMb <= limitMb) return;
    clearInterval(timer);
    send({ type: 'heap', usedMb, limitMb });
  }, CHECK_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
