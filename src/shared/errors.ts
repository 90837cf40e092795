import { ERRORS, type ErrorCode } from './svc-errors.js';
import { COMPILE_ISSUES } from './compile-issue-codes.js';
import { CLI_ERRORS, CONSOLE_ERRORS } from './client-codes.js';

/**
 * The one error registry. Every error that leaves the process (HTTP body, IPC
 * message, CLI output) is one of these codes, carried as data: {code, message}.
 * Codes are stable: automation branches on them.
 *
 * One table per family, all exported from this module (import them from here): `Svc.*`,
 * an HTTP status each, in svc-errors.ts; compile issue codes, which travel inside a 422's
 * `issues`, in compile-issue-codes.ts; the CLI's and the console's own codes, which never
 * cross HTTP, in client-codes.ts.
 * test/unit/error-registry.test.ts fails on a code-shaped literal that none of them holds.
 */
export { ERRORS, type ErrorCode } from './svc-errors.js';
export { COMPILE_ISSUES, type CompileIssueCode } from './compile-issue-codes.js';
export { CLI_ERRORS, CONSOLE_ERRORS, type CliCode, type ConsoleCode } from './client-codes.js';

/** Every code the product emits, of every family: what the registry test checks sources and docs against. */
export const ALL_CODES: ReadonlyMap<string, { status?: number; exit?: number; message: string }> = new Map(
  [ERRORS, COMPILE_ISSUES, CLI_ERRORS, CONSOLE_ERRORS].flatMap((family) => Object.entries(family)),
);

/** The message of a `Svc.Publish.Rejected`, from a dry-run or a refused publish alike. */
export function rejectedMessage(issues: number): string {
  return `The candidate configuration has ${issues} issue(s); the previous generation keeps serving`;
}

/** The wire form of an error, on HTTP and IPC alike. */
export interface ErrorEnvelope {
  code: ErrorCode;
  message: string;
  traceId: string;
  [extra: string]: unknown;
}

/**
 * Every error body on both ports is built here: {code, message, traceId, ...extra}.
 * `message` defaults to the registry's; `extra` carries the code's own fields
 * (retryAfter, issues, requiredScope, ...). A step's refusal, built once per route,
 * holds a slot its requests' trace ids are written into (steps/reply.ts).
 */
export function errorEnvelope(code: ErrorCode, traceId: string, message: string = ERRORS[code].message, extra?: Record<string, unknown>): ErrorEnvelope {
  return { code, message, traceId, ...extra };
}

export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extra: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message?: string, extra?: Record<string, unknown>) {
    super(message ?? ERRORS[code].message);
    this.code = code;
    this.status = ERRORS[code].status;
    this.extra = extra;
  }

  envelope(traceId: string): ErrorEnvelope {
    return errorEnvelope(this.code, traceId, this.message, this.extra);
  }
}

export function statusOf(code: ErrorCode): number {
  return ERRORS[code].status;
}

/** Any thrown value as a registry error; unknown errors become Svc.Internal without leaking details. */
export function asSvcError(err: unknown): SvcError {
  return err instanceof SvcError ? err : new SvcError('Svc.Internal');
}
