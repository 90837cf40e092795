import * as oidc from 'openid-client';
import { request, type Dispatcher } from 'undici';
import { errorType, type CallTrace, type StepEnv } from '../step.js';
import { fetchResponse } from './provider-fetch.js';
import type { Introspected } from './introspection-cache.js';

/**
 * The call to an RFC 7662 introspection endpoint: openid-client builds the request
 * (client_secret_basic, RFC 6749 §2.3.1's form-urlencoded id and secret) and checks the
 * answer; the bytes go over the worker's guarded service connections (StepEnv.servicePool),
 * so the tenant's upstream policy holds at connect time too.
 */

/** The endpoint could not be asked: no connection, no answer in time, or a 5xx. Fail static applies. */
export class EndpointUnreachable extends Error {
  override readonly name = 'EndpointUnreachable';
}

/** The most an introspection answer may hold (claims of one token). */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface IntrospectionTarget {
  url: string;
  clientId: string;
  clientSecret: string;
  timeoutMs: number;
  tokenTypeHint?: string;
}

/**
 * Asks the endpoint about one token; built once per route step. Rejects with
 * EndpointUnreachable, or another error for a bad answer (4xx, not RFC 7662). `trace`: the
 * call's place in the trace of the request that made it (others waiting on it share it).
 */
export function introspector(env: Pick<StepEnv, 'servicePool'>, tenant: string, t: IntrospectionTarget): (token: string, nowMs: number, trace: CallTrace | null) => Promise<Introspected> {
  // Only the endpoint is known (no discovery): the issuer field is required by the type and
  // used solely to check signed (JWT) answers, which the step does not ask for.
  const server = { issuer: new URL(t.url).origin, introspection_endpoint: t.url };
  const auth = oidc.ClientSecretBasic(t.clientSecret);
  const insecure = t.url.startsWith('http:'); // the operator's allow-list decides what may be called
  const params = t.tokenTypeHint === undefined ? undefined : { token_type_hint: t.tokenTypeHint };
  return async (token, nowMs, trace) => {
    // A configuration per call (a cache miss; some µs beside a round trip): openid-client
    // takes no per-call headers, and its fetch carries this call's traceparent.
    const config = new oidc.Configuration(server, t.clientId, undefined, auth);
    if (insecure) oidc.allowInsecureRequests(config);
    config[oidc.customFetch] = viaServicePool(env, tenant, t.url, t.timeoutMs, trace);
    return answerOf(await oidc.tokenIntrospection(config, token, params).catch(rethrow), nowMs);
  };
}

/** RFC 7662 §2.2: only `active: true` passes; an exp or nbf that rules the token out now makes it inactive. */
export function answerOf(body: Record<string, unknown>, nowMs: number): Introspected {
  if (body.active !== true) return { active: false };
  const exp = body.exp;
  if (exp !== undefined && (typeof exp !== 'number' || !Number.isFinite(exp))) return { active: false };
  const expMs = exp === undefined ? Infinity : exp * 1000;
  if (expMs <= nowMs) return { active: false };
  if (typeof body.nbf === 'number' && body.nbf * 1000 > nowMs) return { active: false };
  return { active: true, claims: body, expMs };
}

/** openid-client wraps what the fetch threw: the unreachable case is found by its cause. */
function rethrow(err: unknown): never {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e instanceof EndpointUnreachable) throw e;
  throw err;
}

function viaServicePool(env: Pick<StepEnv, 'servicePool'>, tenant: string, url: string, timeoutMs: number, trace: CallTrace | null): oidc.CustomFetch {
  return async (target, init) => {
    // Looked up per call (a map hit): the compiler's trial build has no service connections and never calls.
    if (env.servicePool === undefined) throw new Error('no service connections in this environment');
    const dispatcher = env.servicePool(tenant, url) as unknown as Dispatcher;
    let res: Dispatcher.ResponseData;
    try {
      // timeoutMs bounds the whole call, the answer's body included.
      const signal = AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)].filter((s): s is AbortSignal => s instanceof AbortSignal));
      const headers = trace === null ? init.headers : { ...init.headers, traceparent: trace.traceparent };
      res = await request(target, { method: init.method as 'POST', headers, body: init.body === undefined || init.body === null ? null : String(init.body), dispatcher, signal });
      if (res.statusCode >= 500) {
        // Read and dropped (a small error page; a large one closes the connection): a body destroyed unread would be an uncaught error.
        await res.body.dump().catch(() => {});
        trace?.end(res.statusCode);
        throw new EndpointUnreachable(`the endpoint answered ${res.statusCode}`);
      }
      const answer = await fetchResponse(res, MAX_ANSWER_BYTES, 'the introspection answer');
      trace?.end(res.statusCode);
      return answer;
    } catch (err) {
      // No usable answer (no connection, a timeout, a cut or oversized body): the endpoint is as good as unreachable.
      if (err instanceof EndpointUnreachable) throw err; // a 5xx: its trace already ended with the status
      trace?.fail(errorType(err));
      throw new EndpointUnreachable(`the endpoint cannot be reached: ${(err as Error).message}`, { cause: err });
    }
  };
}
