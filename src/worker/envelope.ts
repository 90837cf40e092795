import { ERRORS, type ErrorCode } from '../shared/errors.js';
import { staticReply, type StaticReply } from './response-head.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** A registry error as a data-port reply: the same {code, message, traceId} envelope as the admin port. */
export function envelopeReply(code: ErrorCode, traceId: string, headers?: Record<string, string>): StaticReply {
  const e = ERRORS[code];
  return staticReply(e.status, JSON.stringify({ code, message: e.message, traceId }), headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS);
}
