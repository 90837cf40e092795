import { request, type Dispatcher } from 'undici';
import type { StepDefinition as PackageStep, StepEnv as PackageEnv, StepLog, SubRequestInit, SubResponse } from '../../sdk/step.js';
import type { StepContext, StepEnv, StepReply } from '../step.js';
import { declaredAnswer } from '../reply.js';
import { readCapped } from '../capped-body.js';
import { PACKAGE_STEP_MAX_TIMEOUT_MS } from './check-definition.js';

/** The most of a cluster's answer `request()` reads: it is held whole, per request. */
export const MAX_SUB_ANSWER_BYTES = 1024 * 1024;

/**
 * The public StepEnv of one package step in one route, built once per generation from the
 * create context: everything a package reaches outside the request goes through it, and
 * only as far as the step declared (its clusters and secrets, checked at publish).
 */
export function packageStepEnv(def: PackageStep, settings: unknown, ctx: StepContext): PackageEnv {
  const { tenant, env } = ctx;
  const route = routeOf(ctx.bucket);
  const log = stepLog(env.log, { step: def.code, tenant, route });
  const secrets = new Set((def.secrets?.(settings) ?? []).map((r) => r.name));
  const clusters = new Set((def.clusters?.(settings) ?? []).map((r) => r.name));
  const answers = new Map(def.answers.map((a) => [a.code, a]));
  // The declared message's envelope is built once per code: most answers are that one.
  const plain = new Map<string, StepReply>();
  const budget = Math.min(def.timeoutMs ?? PACKAGE_STEP_MAX_TIMEOUT_MS, PACKAGE_STEP_MAX_TIMEOUT_MS);
  return {
    tenant,
    route,
    log,
    state: ctx.state,
    secret(name) {
      if (!secrets.has(name)) throw new Error(`step ${def.code}: secret ${name} is not one its secrets(settings) declares`);
      return process.env[name];
    },
    request(cluster, init) {
      if (!clusters.has(cluster)) return Promise.reject(new Error(`step ${def.code}: cluster ${cluster} is not one its clusters(settings) declares`));
      return clusterRequest(env, `${tenant}/${cluster}`, init, budget);
    },
    answer(code, message, headers) {
      const a = answers.get(code);
      if (a === undefined) throw new Error(`step ${def.code}: answer ${code} is not one its answers declare`);
      if (message !== undefined || headers !== undefined) return declaredAnswer(a.status, a.code, message ?? a.when, headers);
      let r = plain.get(code);
      if (r === undefined) plain.set(code, (r = declaredAnswer(a.status, a.code, a.when)));
      return r;
    },
  };
}

/** `tenant/name` of the route or chain a bucket belongs to (`tenant/name#/steps/0@…`; explain's are prefixed). */
function routeOf(bucket: string): string {
  const b = bucket.startsWith('explain/') ? bucket.slice('explain/'.length) : bucket;
  const i = b.indexOf('#');
  return i === -1 ? b : b.slice(0, i);
}

function stepLog(base: StepEnv['log'], bindings: Record<string, string>): StepLog {
  const error = (base as { error?: StepEnv['log']['warn'] }).error?.bind(base) ?? base.warn.bind(base);
  return {
    info: (obj, msg) => base.info({ ...obj, ...bindings }, msg),
    warn: (obj, msg) => base.warn({ ...obj, ...bindings }, msg),
    error: (obj, msg) => error({ ...obj, ...bindings }, msg),
  };
}

/**
 * A call to a tenant's cluster through the generation's pools (a pick of its targets: its
 * balancing, TLS, allow-list and timeouts apply), bounded as a whole by the init's timeoutMs
 * and the step's budget; the answer is read whole, up to MAX_SUB_ANSWER_BYTES.
 */
async function clusterRequest(env: StepEnv, key: string, init: SubRequestInit, budget: number): Promise<SubResponse> {
  if (!init.path.startsWith('/')) throw new Error(`request path must start with /: ${init.path}`);
  const call = env.upstreamCall?.(key);
  if (call === undefined) throw new Error('no cluster connections here (a publish check or explain does not call)');
  const timeoutMs = Math.min(init.timeoutMs ?? budget, budget);
  const sentAt = performance.now();
  let res: Dispatcher.ResponseData;
  try {
    res = await request(`http://upstream${init.path}`, {
      method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: init.headers,
      body: init.body,
      dispatcher: call.target as unknown as Dispatcher, // request() needs only dispatch()
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    call.failed(err as Error);
    throw err;
  }
  call.answered(performance.now() - sentAt, res.statusCode);
  const body = await readCapped(res.body, MAX_SUB_ANSWER_BYTES, `the answer of ${key}`);
  const headers: Record<string, string> = {};
  for (const [k, val] of Object.entries(res.headers)) if (val !== undefined) headers[k] = Array.isArray(val) ? val.join(', ') : val;
  return { status: res.statusCode, headers, body };
}
