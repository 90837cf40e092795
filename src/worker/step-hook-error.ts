/**
 * A step's response hook (flow.onResponse) threw while the answer's head was being edited:
 * the request is answered 500 Svc.Data.StepFailed and counted as that step's failure, never
 * as the upstream's (an upstream answer is not a failed attempt because a hook broke on it).
 */
export class StepHookError extends Error {
  override readonly name = 'StepHookError';

  constructor(
    override readonly cause: unknown,
    /** The code of the step that registered the hook. */
    readonly step: string,
  ) {
    super(`a response hook of step ${step} threw: ${(cause as Error)?.message ?? String(cause)}`);
  }
}
