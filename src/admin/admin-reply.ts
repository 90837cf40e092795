import type { ServerResponse } from 'node:http';
import type { SvcError } from '../shared/errors.js';
import { Reply } from './op-context.js';

/** A handler's result as an answer: a plain value is a 200 with that JSON body. */
export const asReply = (result: unknown): Reply => (result instanceof Reply ? result : new Reply(200, result));

export function writeJson(res: ServerResponse, status: number, body: unknown, traceId: string): void {
  writeText(res, status, JSON.stringify(body), 'application/json', traceId);
}

/**
 * Every admin answer carries its traceId and is never cached: answers name keys, drafts
 * and audit records. An answer already started is left as it is.
 */
export function writeText(res: ServerResponse, status: number, text: string, contentType: string, traceId: string): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(text),
    'x-trace-id': traceId,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(text);
}

/**
 * The headers an error answer adds before its envelope: the methods a path allows (405),
 * when to try again (the auth throttle, a publish quota), the scheme a 401 wants.
 * `authorization` is the request's header: a 401 without one names no token error.
 */
export function setErrorHeaders(res: ServerResponse, error: SvcError, allow: readonly string[] | undefined, authorization: string | undefined): void {
  if (allow) res.setHeader('allow', allow.join(', '));
  const retryAfter = error.extra?.retryAfter;
  if (typeof retryAfter === 'number') res.setHeader('retry-after', String(retryAfter));
  // RFC 9110 §15.5.2, RFC 6750 §3.
  if (error.status === 401) {
    res.setHeader('www-authenticate', authorization === undefined ? 'Bearer realm="switchyard"' : 'Bearer realm="switchyard", error="invalid_token"');
  }
}
