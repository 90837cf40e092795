import { request, type Dispatcher } from 'undici';
import * as v from 'valibot';
import { errorType, type Flow, type StepEnv } from './step.js';
import { stepError } from './reply.js';
import { readCapped } from './capped-body.js';

/** The connections a step calls services on: the worker's (StepEnv.servicePool). */
function poolFor(env: Pick<StepEnv, 'servicePool'>, tenant: string, url: string): Dispatcher {
  if (env.servicePool === undefined) throw new Error('no service connections in this environment');
  return env.servicePool(tenant, url) as unknown as Dispatcher; // request() needs only dispatch()
}

/**
 * The step's answer when undici refused the call before sending it (a copied header or
 * the URI holds a byte HTTP does not allow): the client's request is at fault, not the service.
 */
export const REFUSED = stepError('Svc.Data.BadRequest');

export const HttpUrl = v.pipe(v.string(), v.url(), v.regex(/^https?:\/\//, 'must be an http(s) URL'));
export const HeaderName = v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/, 'must be a header name'));

export interface SubResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * Calls a service on behalf of a step, with the method and the target (X-Forwarded-Method,
 * X-Forwarded-Uri) and the named request headers (lower case) as the upstream would receive them now: after the preceding steps' edits, without the
 * client's copies of headers the route's steps own (so a client cannot name its own
 * consumer id). Rejects on network errors, timeouts and answers over MAX_ANSWER_BYTES.
 */
export async function subRequest(env: Pick<StepEnv, 'servicePool'>, tenant: string, url: string, method: string, flow: Flow, copy: readonly string[], timeoutMs: number): Promise<SubResponse> {
  const req = flow.req;
  const headers: Record<string, string> = {};
  if (copy.length > 0) {
    for (const [name, val] of flow.preview().headers) {
      if (headers[name] === undefined && copy.includes(name)) headers[name] = val; // the first value, as req.header gives
    }
  }
  headers['x-forwarded-method'] = req.method;
  // The target the upstream will receive (after path-rewrite, without a key key-auth
  // stripped), so the service judges the request that goes on, not the client's.
  headers['x-forwarded-uri'] = flow.query === null ? flow.path : `${flow.path}?${flow.query}`;
  // The call belongs to the request's trace (its own span when traced), whatever the client sent.
  const call = flow.traceCall(method, url);
  if (call !== null) headers.traceparent = call.traceparent;
  try {
    // timeoutMs bounds the whole call (undici's header and body timeouts are idle timers,
    // and coarse): a service that trickles its answer cannot hold the request longer.
    const res = await request(url, { method: method as 'GET', headers, dispatcher: poolFor(env, tenant, url), signal: AbortSignal.timeout(timeoutMs) });
    const body = await readCapped(res.body, MAX_ANSWER_BYTES, 'the answer');
    call?.end(res.statusCode);
    return { status: res.statusCode, headers: res.headers, body: body.toString('utf8') };
  } catch (err) {
    call?.fail(errorType(err));
    throw err;
  }
}

/** The most a called service's answer may hold: it is read whole, per request. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

