import { ERRORS, errorEnvelope, type ErrorCode } from '../shared/errors.js';
import type { StepReply } from './step.js';

/**
 * A step's error answer: the registry's status for `code`, the registry's message unless
 * the step names the case more precisely, and the envelope every gateway error has.
 */
export function stepError(code: ErrorCode, message?: string, headers?: Record<string, string>, extra?: Record<string, unknown>): StepReply {
  return { status: ERRORS[code].status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(errorEnvelope(code, undefined, message, extra)) };
}

/**
 * A name (consumer, subject) as a header value: as is when it is printable ASCII, else
 * percent-encoded UTF-8, so `zoë` or `用户` reach the upstream intact and never make the
 * request unsendable.
 */
export function headerSafe(name: string): string {
  return /^[\x20-\x7e]*$/.test(name) ? name : encodeURIComponent(name);
}
