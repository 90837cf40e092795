import { request, type Dispatcher } from 'undici';
import type { CustomFetch } from 'openid-client';
import type { StepEnv } from '../step.js';
import { readCapped } from '../capped-body.js';
import { MAX_ANSWER_BYTES } from '../sub-request.js';

/** Statuses whose Response may carry no body (Fetch standard). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * openid-client's fetch, sent through the worker's service connections for `tenant`
 * (StepEnv.servicePool): the tenant's upstream allow-list applies when each connection is
 * made, to the issuer and to every endpoint its discovery document names. Answers are read
 * whole up to MAX_ANSWER_BYTES; redirects are not followed (openid-client asks for none).
 */
export function providerFetch(env: Pick<StepEnv, 'servicePool'>, tenant: string): CustomFetch {
  return async (url, options) => {
    if (env.servicePool === undefined) throw new Error('no service connections in this environment');
    // One pool per origin: the discovery document's endpoints are not each a pool key.
    const pool = env.servicePool(tenant, new URL(url).origin);
    const body = options.body;
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof URLSearchParams)) throw new Error('unsupported request body');
    const res = await request(url, {
      method: options.method as 'GET',
      headers: Object.fromEntries(new Headers(options.headers).entries()),
      body: body === undefined || body === null ? undefined : String(body),
      dispatcher: pool as never, // request() needs only dispatch()
      signal: options.signal,
    });
    return fetchResponse(res, MAX_ANSWER_BYTES, "the provider's answer");
  };
}

/**
 * An undici answer as the fetch Response openid-client reads: the body whole (at most
 * `maxBytes`, else rejects), none for the statuses that may carry none (openid-client then
 * refuses the status), repeated header values kept.
 */
export async function fetchResponse(res: Dispatcher.ResponseData, maxBytes: number, what: string): Promise<Response> {
  const bytes = await readCapped(res.body, maxBytes, what);
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Response(NULL_BODY.has(res.statusCode) ? null : bytes, { status: res.statusCode, headers });
}
