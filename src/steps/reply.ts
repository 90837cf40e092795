import type { StepReply } from './step.js';

/** A step's error answer: the same JSON envelope shape as every other gateway error. */
export function stepError(status: number, code: string, message: string, headers?: Record<string, string>): StepReply {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ code, message }) };
}

/**
 * A name (consumer, subject) as a header value: as is when it is printable ASCII, else
 * percent-encoded UTF-8, so `zoë` or `用户` reach the upstream intact and never make the
 * request unsendable.
 */
export function headerSafe(name: string): string {
  return /^[\x20-\x7e]*$/.test(name) ? name : encodeURIComponent(name);
}
