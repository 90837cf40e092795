/**
 * How a step keeps per-route state across publishes. The store itself is the worker's
 * (src/worker/step-states.ts, owned by its WorkerContext); a step only sees `state`, in
 * its factory's context, which returns the object kept for the step's bucket (its place in
 * the route plus its canonical settings): the same object while both stay unchanged,
 * whatever else is published, a fresh one when either changes.
 */
export type StateOf = <T>(make: () => T) => T;

/** The compiler's trial build uses this bucket: its state is never kept. */
export const TRIAL_BUCKET = 'compile-check';

/** State that is never kept (the trial build, explain's dry run, a unit test): `make` every time. */
export const freshState: StateOf = (make) => make();
