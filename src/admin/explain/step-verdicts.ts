import type { CompiledStep } from '../../contracts/generation.js';
import type { Flow, StepEnv, StepOutcome } from '../../steps/step.js';
import type { StepLookup } from '../../steps/step-registry.js';
import { freshState } from '../../steps/step-state.js';
import type { StepView, Verdict } from '../../contracts/explain.js';

/**
 * Steps whose decision reads the request alone: explain runs them for real on a dry flow.
 * The others are told apart by why they cannot be: they count traffic, call out, draw at
 * random or read the body. Steps not listed in either run (they only edit the request or
 * the response, or log) and never refuse.
 */
const FROM_THE_REQUEST = new Set([
  'method-restriction', 'ip-restriction', 'request-size-limit', 'key-auth', 'basic-auth', 'jwt-auth', 'bot-detection', 'cors',
  'path-rewrite', 'query-params', 'request-headers', 'response-headers', 'request-id', 'echo', 'timeout', 'retry', 'compression',
]);
const AT_RUN_TIME: Record<string, string> = {
  'rate-limit': 'depends on the traffic before it (node-wide token buckets)',
  'concurrency-limit': 'depends on the requests in flight',
  'circuit-breaker': "depends on the upstream's recent failures",
  cache: 'depends on what is stored (a hit answers, a miss goes on)',
  'forward-auth': 'asks a service, which explain does not call',
  'oauth-introspection': 'asks the introspection endpoint (or its cache), which explain does not',
  'http-callout': 'calls a service, which explain does not call',
  'oidc-login': 'reads a sealed session cookie and may call the identity provider, which explain does not call',
  'fault-injection': 'draws at random per request',
  'traffic-split': 'draws at random per request (it may change the cluster)',
  'body-validate': 'reads the body, which explain does not have',
  mirror: 'copies the request to a cluster; never refuses',
  'access-log': 'writes a log line; never refuses',
  'client-cert': 'depends on the TLS connection\'s client certificate, which explain does not have',
};

/** No service is reachable from a simulation: a step that would call one was filtered out above. */
const DRY_ENV: StepEnv = { rateLimits: { acquire: () => true, remaining: () => 0 }, traceId: () => '', log: { info() {}, warn() {} } };

/**
 * The route's steps in run order, each with what it would do to this request: run for real
 * where the request alone decides (a missing key, a method, a client address, a declared
 * size, a rewrite), else said to be decided at run time and why. After a refusal or an
 * answer that ends the chain, the rest are `not reached`.
 */
export async function stepVerdicts(steps: readonly CompiledStep[], flow: Flow, tenant: string, clientKnown: boolean, registry: StepLookup): Promise<{ views: StepView[]; ended: boolean }> {
  const views: StepView[] = [];
  let ended = false;
  for (const s of steps) {
    if (s.kind === 'group') {
      const members = s.members.map((m) => m.map((x) => notRun(x, ended ? 'not reached' : 'at run time', 'a member of a group')));
      views.push({ code: 'group', failureStrategy: 'FailFast', verdict: ended ? 'not reached' : 'at run time', reason: `members run concurrently (${s.merge}); explain does not run groups`, group: { id: s.id, merge: s.merge, members } });
      continue;
    }
    const strategy: StepView['failureStrategy'] = s.continue ? 'Continue' : 'FailFast';
    if (ended) {
      views.push({ code: s.code, failureStrategy: strategy, verdict: 'not reached', reason: 'an earlier step ended the chain' });
      continue;
    }
    const def = registry.get(s.code);
    // A package step runs here only when it says its decision reads the request alone (`pure`).
    if (def?.origin && !def.pure) {
      views.push({ code: s.code, failureStrategy: strategy, verdict: 'at run time', reason: `a step of package ${def.origin.package}@${def.origin.version} not marked pure: explain does not run it` });
      continue;
    }
    if (!def?.origin && !FROM_THE_REQUEST.has(s.code)) {
      const why = AT_RUN_TIME[s.code];
      views.push({ code: s.code, failureStrategy: strategy, verdict: why ? 'at run time' : 'passes', reason: why ?? 'edits the request or the response; never refuses' });
      continue;
    }
    if (s.code === 'ip-restriction' && !clientKnown) {
      views.push({ code: s.code, failureStrategy: strategy, verdict: 'at run time', reason: 'depends on the client address: give clientAddress' });
      continue;
    }
    let outcome: StepOutcome;
    try {
      const run = def!.create!(s.settings, { bucket: `explain/${s.bucket}`, tenant, env: DRY_ENV, state: freshState });
      // A package step's promise gets a short budget here: explain never waits on it.
      outcome = await settledWithin(run(flow), EXPLAIN_STEP_BUDGET_MS);
    } catch (err) {
      views.push({ code: s.code, failureStrategy: strategy, verdict: 'at run time', reason: `could not be simulated: ${(err as Error).message}` });
      continue;
    }
    if (outcome === undefined) {
      views.push({ code: s.code, failureStrategy: strategy, verdict: 'passes', reason: 'lets this request through' });
    } else if (outcome.served) {
      views.push({ code: s.code, failureStrategy: strategy, verdict: 'answers', status: outcome.status, reason: 'answers the request itself' });
      ended = true;
    } else {
      const error = errorCode(outcome.body);
      const base = { code: s.code, failureStrategy: strategy, verdict: 'refuses' as const, status: outcome.status, ...(error ? { error } : {}) };
      views.push({ ...base, reason: s.continue ? 'refuses; the failure is logged and the chain goes on (Continue)' : 'refuses: its answer goes to the client' });
      if (!s.continue) ended = true;
    }
  }
  return { views, ended };
}

function notRun(s: CompiledStep, verdict: Verdict, reason: string): StepView {
  if (s.kind === 'group') return { code: 'group', failureStrategy: 'FailFast', verdict, reason, group: { id: s.id, merge: s.merge, members: s.members.map((m) => m.map((x) => notRun(x, verdict, reason))) } };
  return { code: s.code, failureStrategy: s.continue ? 'Continue' : 'FailFast', verdict, reason };
}

/** The error code of a step's envelope answer; undefined for other bodies. */
function errorCode(body: string | Buffer): string | undefined {
  try {
    const code = (JSON.parse(body.toString()) as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** How long explain waits for a step it runs (a pure package step's promise) before calling it undecided. */
const EXPLAIN_STEP_BUDGET_MS = 1_000;

function settledWithin<T>(r: T | Promise<T>, ms: number): T | Promise<T> {
  if (!(r instanceof Promise)) return r;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`it did not settle within ${ms} ms`)), ms)));
  r.catch(() => {}); // settling after the budget: nobody waits for it any more
  return Promise.race([r, late]).finally(() => clearTimeout(timer));
}
