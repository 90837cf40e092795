import { ERRORS, errorEnvelope, type ErrorCode } from '../shared/errors.js';
import { staticReply, type StaticReply } from './response-head.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** A registry error as a data-port reply: the same {code, message, traceId} envelope as the admin port. */
export function envelopeReply(code: ErrorCode, traceId: string, headers?: Record<string, string>): StaticReply {
  const r = staticReply(ERRORS[code].status, JSON.stringify(errorEnvelope(code, traceId)), headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS);
  r.code = code;
  r.traceId = traceId;
  return r;
}
