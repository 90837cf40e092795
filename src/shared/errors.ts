/**
 * The one error registry. Every error that leaves the process (HTTP body, IPC
 * message, CLI output) is one of these codes, carried as data: {code, message}.
 * Codes are stable: automation branches on them.
 *
 * One table per family, all reachable from this module: `Svc.*` (an HTTP status each)
 * here; compile issue codes, which travel inside a 422's `issues`, in compile-issue-codes.ts;
 * the CLI's and the console's own codes, which never cross HTTP, in client-codes.ts.
 * test/unit/error-registry.test.ts fails on a code-shaped literal that none of them holds.
 */
export const ERRORS = {
  'Svc.Auth.Unauthenticated': { status: 401, message: 'A valid bearer token is required' },
  'Svc.Auth.Scope': { status: 403, message: 'The key lacks a required scope' },
  'Svc.Auth.TenantScope': { status: 403, message: 'The key is bound to another tenant' },
  'Svc.Auth.Throttled': { status: 429, message: 'Too many failed authentications from this address; retry later' },
  'Svc.Request.NotFound': { status: 404, message: 'No such operation' },
  'Svc.Request.MethodNotAllowed': { status: 405, message: 'Method not allowed on this path' },
  'Svc.Request.BadJson': { status: 400, message: 'The request body is not valid JSON' },
  'Svc.Request.BadParam': { status: 400, message: 'A path parameter is invalid' },
  'Svc.Request.MediaType': { status: 415, message: 'The request body must be application/json' },
  'Svc.Request.TooLarge': { status: 413, message: 'The request body is too large' },
  'Svc.Config.Invalid': { status: 400, message: 'The document does not have the shape of its kind' },
  'Svc.Config.NotFound': { status: 404, message: 'No such entity' },
  'Svc.Publish.Rejected': { status: 422, message: 'The candidate configuration does not compile' },
  'Svc.Publish.NotFound': { status: 404, message: 'No such generation' },
  'Svc.Publish.Unacknowledged': { status: 503, message: 'Not every worker acknowledged the generation in time' },
  'Svc.Quota.DocumentTooLarge': { status: 413, message: "The document is larger than the tenant's documentBytes quota" },
  'Svc.Quota.Entities': { status: 413, message: "The write would take the tenant past its entities quota" },
  'Svc.Quota.Bytes': { status: 413, message: "The write would take the tenant past its totalBytes quota" },
  'Svc.Quota.Publishes': { status: 429, message: "The tenant has used its publishesPerMinute quota; retry later" },
  'Svc.Publish.Pruned': { status: 410, message: 'The generation is older than the history the gateway keeps' },
  'Svc.Plugin.NotFound': { status: 404, message: 'No such step code' },
  'Svc.Key.Invalid': { status: 400, message: 'The key request is invalid' },
  'Svc.Key.NotFound': { status: 404, message: 'No such key in this tenant' },
  'Svc.Request.BadQuery': { status: 400, message: 'A query parameter is invalid' },
  'Svc.Request.Malformed': { status: 400, message: 'The request could not be read: malformed, or it ended before its body was complete' },
  'Svc.Request.HeadTooLarge': { status: 431, message: 'The request head is too large' },
  'Svc.Request.Timeout': { status: 408, message: 'The request took too long to arrive' },
  'Svc.Request.TooManyConnections': { status: 429, message: 'Too many open connections from this client address' },
  'Svc.Data.NotPublished': { status: 503, message: 'No configuration has been published yet' },
  'Svc.Data.NoRoute': { status: 404, message: 'No route matches the request' },
  'Svc.Data.RouteUnavailable': { status: 503, message: "This route's steps could not be loaded at start-up (the gateway's log says why); a publish that fixes it restores the route" },
  'Svc.Data.UpstreamUnreachable': { status: 502, message: 'The upstream could not be reached' },
  'Svc.Data.UpstreamDenied': { status: 502, message: "The upstream's address is one this tenant may not reach (worker.json upstreams)" },
  'Svc.Data.UpstreamInvalid': { status: 502, message: 'The upstream answered with a message the gateway cannot relay' },
  'Svc.Data.BadRequest': { status: 400, message: 'The request cannot be forwarded: the path, the Host or another header, or the method is malformed or holds a byte HTTP does not allow' },
  'Svc.Data.BadFraming': { status: 400, message: 'The request body framing is not allowed: Transfer-Encoding must end with chunked' },
  'Svc.Data.TooLarge': { status: 413, message: 'The request body is too large for this route' },
  'Svc.Data.UpstreamBusy': { status: 503, message: "Every connection to this cluster's upstreams is busy and the wait for one is over; retry shortly" },
  'Svc.Data.RequestTimeout': { status: 408, message: "The request body did not arrive within the cluster's bodyMs" },
  'Svc.Data.UpstreamTimeout': { status: 504, message: 'The upstream did not answer in time' },
  'Svc.Data.RateLimited': { status: 429, message: 'Rate limit exceeded' },
  // Step answers: a step may pass a more precise message; the status is always this one.
  'Svc.Data.Unauthenticated': { status: 401, message: 'Valid credentials are required' },
  'Svc.Data.IpDenied': { status: 403, message: 'The client address is not allowed' },
  'Svc.Data.BotDenied': { status: 403, message: 'This client is not allowed' },
  'Svc.Data.CorsDenied': { status: 403, message: 'Origin not allowed' },
  'Svc.Data.MethodNotAllowed': { status: 405, message: 'Method not allowed on this route' },
  'Svc.Data.BodyInvalid': { status: 400, message: 'The request body violates the schema' },
  'Svc.Data.MediaType': { status: 415, message: 'The request body must be application/json' },
  'Svc.Data.ConcurrencyLimited': { status: 503, message: 'Too many requests in flight on this route' },
  'Svc.Data.CircuitOpen': { status: 503, message: 'The upstream is failing; the circuit is open' },
  'Svc.Data.AuthUnavailable': { status: 503, message: 'The auth service could not be reached' },
  'Svc.Data.CalloutFailed': { status: 502, message: 'The callout failed' },
  'Svc.Console.NotBuilt': { status: 503, message: 'The console is not built' },
  'Svc.Internal': { status: 500, message: 'Internal error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** The wire form of an error, on HTTP and IPC alike. */
export interface ErrorEnvelope extends ErrorBody {
  traceId: string;
}

/** An error body without a trace id: a step's refusal shared by many requests. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  [extra: string]: unknown;
}

type EnvelopeExtra = Record<string, unknown> | undefined;

/**
 * Every error body on both ports is built here: {code, message, traceId, ...extra}.
 * `message` defaults to the registry's; `extra` carries the code's own fields
 * (retryAfter, issues, requiredScope, ...).
 */
export function errorEnvelope(code: ErrorCode, traceId: string, message?: string, extra?: EnvelopeExtra): ErrorEnvelope;
/**
 * A step's refusal built once when its route loads is shared by every request it
 * refuses, so it carries no trace id (docs/reference.md, Error codes).
 */
export function errorEnvelope(code: ErrorCode, traceId: undefined, message?: string, extra?: EnvelopeExtra): ErrorBody;
export function errorEnvelope(code: ErrorCode, traceId: string | undefined, message: string = ERRORS[code].message, extra?: EnvelopeExtra): ErrorBody {
  return traceId === undefined ? { code, message, ...extra } : { code, message, traceId, ...extra };
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
