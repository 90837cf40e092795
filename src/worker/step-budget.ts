import type { StepOutcome, StepRun } from '../steps/step.js';

/** A step's promise outlived its budget: the request is answered 504 Svc.Data.StepTimeout (Exchange.requestSteps). */
export class StepTimeout extends Error {
  constructor(
    /** The step's code. */
    readonly step: string,
    readonly timeoutMs: number,
  ) {
    super(`step ${step} did not settle within ${timeoutMs} ms`);
    this.name = 'StepTimeout';
  }
}

/**
 * A step's function under its budget (CompiledStep.timeoutMs): a call that returns a
 * promise gets one timer, cleared when it settles; past `timeoutMs` the call rejects with
 * StepTimeout and whatever the step's promise does later (a value, a rejection) is dropped,
 * handled here so it is never an unhandled rejection. No budget: the function as it is; a
 * call that answers synchronously starts no timer.
 */
export function withBudget(run: StepRun, step: string, timeoutMs: number | undefined): StepRun {
  if (timeoutMs === undefined) return run;
  return (flow) => {
    const r = run(flow);
    if (!(r instanceof Promise)) return r;
    return new Promise<StepOutcome>((resolve, reject) => {
      const timer = setTimeout(() => reject(new StepTimeout(step, timeoutMs)), timeoutMs);
      r.then(
        (o) => {
          clearTimeout(timer);
          resolve(o); // after the timeout: a no-op, the value is dropped
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err); // after the timeout: a no-op, the rejection is dropped
        },
      );
    });
  };
}
