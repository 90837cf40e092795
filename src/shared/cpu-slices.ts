/**
 * Long CPU loops on the supervisor (a 500-entity state document parsed, planned, checked)
 * run in slices: the event loop gets a turn every SLICE_MS, so health probes, lease grants
 * and other admin calls never wait behind one call's loop.
 */
export const SLICE_MS = 5;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Gives the event loop a turn when the current slice has run SLICE_MS. */
export class Slicer {
  private start = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Resolves at once within the slice (no turn), after one event-loop turn past it. */
  async check(): Promise<void> {
    if (performance.now() - this.start < this.sliceMs) return;
    await turn();
    this.start = performance.now();
  }
}

/** A generator's steps run to the end at once: the synchronous use of a sliceable loop. */
export function runAll<T>(steps: Generator<unknown, T>): T {
  let r = steps.next();
  while (!r.done) r = steps.next();
  return r.value;
}

/** A generator's steps in slices: each `yield` is a point where a turn may be given. */
export async function runSliced<T>(steps: Generator<unknown, T>, slicer = new Slicer()): Promise<T> {
  let r = steps.next();
  while (!r.done) {
    await slicer.check();
    r = steps.next();
  }
  return r.value;
}
