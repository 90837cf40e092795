import { ERRORS, errorEnvelope, type ErrorCode } from '../shared/errors.js';
import type { StepReply } from './step.js';

const TRACE_SLOT = '\u0000trace';
const SLOT_JSON = `,"traceId":${JSON.stringify(TRACE_SLOT)}`;

/**
 * A step's error answer: the registry's status for `code`, the registry's message unless
 * the step names the case more precisely, and the envelope every gateway error has.
 */
export function stepError(code: ErrorCode, message?: string, headers?: Record<string, string>, extra?: Record<string, unknown>): StepReply {
  return { ...envelopeAnswer(ERRORS[code].status, errorEnvelope(code, TRACE_SLOT, message, extra), headers), code };
}

/** A package step's declared answer (`Pkg.Reason`): the same envelope and trace-id slot as the gateway's own. */
export function packageAnswer(status: number, code: string, message: string, headers?: Record<string, string>): StepReply {
  return envelopeAnswer(status, { code, message, traceId: TRACE_SLOT }, headers);
}

function envelopeAnswer(status: number, envelope: object, headers?: Record<string, string>): StepReply {
  // Built once per route, so the envelope keeps a slot where each request's trace id goes.
  const marked = JSON.stringify(envelope);
  const traceAt = marked.indexOf(SLOT_JSON);
  const body = marked.slice(0, traceAt) + marked.slice(traceAt + SLOT_JSON.length);
  return { status, headers: { 'content-type': 'application/json', ...headers }, body, traceAt };
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
