import { ERRORS, errorEnvelope, type ErrorCode } from '../shared/errors.js';
import type { StepReply } from './step.js';

const TRACE_SLOT = '\u0000trace';
const SLOT_JSON = `,"traceId":${JSON.stringify(TRACE_SLOT)}`;

/**
 * A step's error answer: the registry's status for `code`, the registry's message unless
 * the step names the case more precisely, and the envelope every gateway error has.
 */
export function stepError(code: ErrorCode, message?: string, headers?: Record<string, string>, extra?: Record<string, unknown>): StepReply {
  // Built once per route, so the envelope keeps a slot where each request's trace id goes.
  const marked = JSON.stringify(errorEnvelope(code, TRACE_SLOT, message, extra));
  const traceAt = marked.indexOf(SLOT_JSON);
  const body = marked.slice(0, traceAt) + marked.slice(traceAt + SLOT_JSON.length);
  return { status: ERRORS[code].status, headers: { 'content-type': 'application/json', ...headers }, body, traceAt, code };
}

/** A step's answer as sent: an envelope from stepError gets the request's trace id. */
export function withTraceId(r: StepReply, traceId: string): string | Buffer {
  if (r.traceAt === undefined || typeof r.body !== 'string') return r.body;
  return `${r.body.slice(0, r.traceAt)},"traceId":${JSON.stringify(traceId)}${r.body.slice(r.traceAt)}`;
}

/**
 * A name (consumer, subject) as a header value: as is when it is printable ASCII, else
 * percent-encoded UTF-8, so `zoë` or `用户` reach the upstream intact and never make the
 * request unsendable.
 */
export function headerSafe(name: string): string {
  return /^[\x20-\x7e]*$/.test(name) ? name : encodeURIComponent(name);
}
