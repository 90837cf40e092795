/**
 * State a step keeps across publishes, per worker: keyed by the step's bucket (its place
 * in the route plus its canonical settings), so an unchanged step keeps its counters when
 * an unrelated publish rebuilds the runtime, and a changed one starts afresh. One small
 * object per distinct step ever built in the worker.
 */
const states = new Map<string, unknown>();

/** The compiler's trial build uses this bucket: its state is never kept. */
export const TRIAL_BUCKET = 'compile-check';

export function stepState<T>(bucket: string, make: () => T): T {
  if (bucket === TRIAL_BUCKET) return make();
  let s = states.get(bucket) as T | undefined;
  if (s === undefined) states.set(bucket, (s = make()));
  return s;
}
