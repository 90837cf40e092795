/** Exit codes of `switchyard run` and `validate`: 0 clean stop, 10 bootstrap failure, 11 binding failure. */
export const EXIT = { ok: 0, bootstrap: 10, binding: 11 } as const;

export class BootError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}
