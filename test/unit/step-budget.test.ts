import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { buildPipeline } from '../../src/worker/pipeline.js';
import { StepTimeout, withBudget } from '../../src/worker/step-budget.js';
import { StepStates } from '../../src/worker/step-states.js';
import { RequestFlow } from '../../src/worker/flow.js';
import { GenerationRequests } from '../../src/worker/generation-requests.js';
import { DataMetrics } from '../../src/worker/observe/data-metrics.js';
import { BUILTINS, BUILTIN_STEPS } from '../../src/steps/registry.js';
import { StepRegistry } from '../../src/steps/step-registry.js';
import type { CompiledStep } from '../../src/contracts/generation.js';
import type { Flow, StepDefinition, StepEnv, StepOutcome, StepRun } from '../../src/steps/step.js';
import { recordedExchange } from '../helpers/recording-downstream.js';

// A step's budget (CompiledStep.timeoutMs): a promise that outlives it rejects with
// StepTimeout (the exchange answers 504 Svc.Data.StepTimeout); what the step does later is
// dropped; a sync answer, or a step without a budget, gets no timer and no wrapper.

const env: StepEnv = { rateLimits: { acquire: () => true, remaining: () => 1 }, traceId: () => 't', log: { info() {}, warn() {} } };
const flow = {} as Flow;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A step whose promise the test settles by hand. */
function held(): { run: StepRun; resolve: (o: StepOutcome) => void; reject: (e: unknown) => void; calls: () => number } {
  let resolve!: (o: StepOutcome) => void;
  let reject!: (e: unknown) => void;
  let calls = 0;
  const run: StepRun = () => {
    calls++;
    return new Promise<StepOutcome>((res, rej) => ((resolve = res), (reject = rej)));
  };
  return { run, resolve: (o) => resolve(o), reject: (e) => reject(e), calls: () => calls };
}

/** Unhandled rejections seen while `fn` runs (and a moment after). */
async function unhandledDuring(fn: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const on = (err: unknown) => seen.push(err);
  process.on('unhandledRejection', on);
  try {
    await fn();
    await sleep(20);
  } finally {
    process.off('unhandledRejection', on);
  }
  return seen;
}

test('no budget: the step function itself, no wrapper', () => {
  const run: StepRun = () => undefined;
  assert.equal(withBudget(run, 'x', undefined), run);
});

test('a promise that never settles rejects with StepTimeout at its budget, naming the step', async () => {
  const h = held();
  const t0 = Date.now();
  await assert.rejects(Promise.resolve(withBudget(h.run, 'slow-step', 40)(flow)), (err: unknown) => {
    assert.ok(err instanceof StepTimeout);
    assert.equal(err.step, 'slow-step');
    assert.equal(err.timeoutMs, 40);
    return true;
  });
  assert.ok(Date.now() - t0 >= 35, 'not before the budget');
});

test('a late value and a late rejection are dropped: not the outcome, never unhandled', async () => {
  for (const late of ['resolve', 'reject'] as const) {
    const h = held();
    const outcomes: string[] = [];
    const unhandled = await unhandledDuring(async () => {
      const p = Promise.resolve(withBudget(h.run, 'late', 20)(flow));
      p.then(() => outcomes.push('value'), (e: unknown) => outcomes.push(e instanceof StepTimeout ? 'timeout' : 'other'));
      await sleep(50);
      if (late === 'resolve') h.resolve({ status: 200, body: 'late' });
      else h.reject(new Error('late failure'));
      await sleep(10);
    });
    assert.deepEqual(outcomes, ['timeout'], `${late}: the budget decided, once`);
    assert.deepEqual(unhandled, [], `${late}: nothing unhandled`);
  }
});

test('a promise settled within its budget: its value or failure, and its timer cleared', async () => {
  const timers: number[] = [];
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const live = new Set<unknown>();
  globalThis.setTimeout = ((fn: () => void, ms: number) => {
    timers.push(ms);
    const id = realSet(fn, ms);
    live.add(id);
    return id;
  }) as typeof setTimeout;
  globalThis.clearTimeout = ((id: NodeJS.Timeout) => {
    live.delete(id);
    realClear(id);
  }) as typeof clearTimeout;
  try {
    const ok = held();
    const p = withBudget(ok.run, 'quick', 10_000)(flow);
    ok.resolve({ status: 201, body: 'made' });
    assert.equal(((await p) as { status: number }).status, 201);
    const bad = held();
    const q = withBudget(bad.run, 'quick', 10_000)(flow);
    const boom = new Error('boom');
    bad.reject(boom);
    await assert.rejects(Promise.resolve(q), (e) => e === boom);
    assert.deepEqual(timers, [10_000, 10_000], 'one timer per async call');
    assert.equal(live.size, 0, 'both cleared when they settled');
  } finally {
    globalThis.setTimeout = realSet;
    globalThis.clearTimeout = realClear;
  }
});

test('a sync answer under a budget: returned as it is, no timer, no promise', () => {
  const realSet = globalThis.setTimeout;
  let timers = 0;
  globalThis.setTimeout = ((...a: Parameters<typeof setTimeout>) => (timers++, realSet(...a))) as typeof setTimeout;
  try {
    const reply = { status: 403, body: 'no' };
    const r = withBudget(() => reply, 'sync', 5)(flow);
    assert.equal(r, reply);
    assert.equal(withBudget(() => undefined, 'sync', 5)(flow), undefined);
    assert.equal(timers, 0);
  } finally {
    globalThis.setTimeout = realSet;
  }
});

test('the pipeline honours CompiledStep.timeoutMs: the chain stops at the step, later steps never run', async () => {
  // fault-injection's delay is a step whose promise settles late (after 2 s).
  const steps: CompiledStep[] = [
    { kind: 'step', code: 'fault-injection', settings: { delay: { percent: 100, ms: 2_000 } }, tenant: 't', bucket: 'b0', timeoutMs: 30 },
    { kind: 'step', code: 'echo', settings: {}, tenant: 't', bucket: 'b1' },
  ];
  const run = buildPipeline(steps, { env: { ...env, random: () => 0 }, registry: BUILTINS, states: new StepStates() })!;
  const f = new RequestFlow({ method: 'GET', path: '/', query: null, headers: [], header: () => undefined } as never, null);
  await assert.rejects(Promise.resolve(run(f)), (e: unknown) => e instanceof StepTimeout && e.step === 'fault-injection');
  assert.equal(f.answeredBy, 'fault-injection', 'echo never started');
  // Without the budget the same chain waits for the delay: only the budget cut it.
  const unbudgeted = buildPipeline([{ ...steps[0]!, timeoutMs: undefined } as CompiledStep, steps[1]!], { env: { ...env, random: () => 0 }, registry: BUILTINS, states: new StepStates() })!;
  const r = unbudgeted(new RequestFlow({ method: 'GET', path: '/', query: null, headers: [], header: () => undefined } as never, null));
  const first = await Promise.race([Promise.resolve(r).then(() => 'settled'), sleep(100).then(() => 'waiting')]);
  assert.equal(first, 'waiting');
});

test('the exchange answers a budget 504 Svc.Data.StepTimeout, logs the step, counts reason timeout; a throw stays 500 threw', async () => {
  const meters = new DataMetrics();
  const lifeEnv = { traceId: () => 'trace-1', log: { warn() {} }, metrics: meters, requestIdHeader: null };
  const cases: [string, StepRun, number, string, string][] = [
    ['timeout', withBudget(held().run, 'hmac-check', 20), 504, 'Svc.Data.StepTimeout', 'hmac-check'],
    ['threw', () => Promise.reject(new Error('bug')), 500, 'Svc.Data.StepFailed', 'answered-by'],
  ];
  for (const [reason, run, status, code, step] of cases) {
    const { ex, down } = recordedExchange();
    const flow = new RequestFlow(ex);
    flow.answeredBy = 'answered-by'; // as the pipeline names each step before it runs it
    ex.begin(flow, new GenerationRequests(() => {}), lifeEnv, null);
    ex.meter = meters.route('acme', 'api');
    const logged: string[] = [];
    ex.requestSteps(run, () => assert.fail('forwarded'), (_err, s) => logged.push(s));
    await sleep(60);
    assert.equal(down.got[0], `head ${status}`, reason);
    assert.match(down.got[1]!, new RegExp(`"code":"${code.replace(/\./g, '\\.')}"`));
    assert.deepEqual(logged, [step]);
  }
  const d = meters.take()!;
  assert.deepEqual(d.routes.find((r) => r.route === 'api')!.failures, [['hmac-check', 'timeout', 1], ['answered-by', 'threw', 1]]);
});

test('a step definition\'s default timeoutMs is compiled in unless the route gives its own', async () => {
  const { compile } = await import('../../src/compiler/compile.js');
  const withBudget: StepDefinition = { code: 'with-budget', summary: 'test', statuses: [], example: {}, schema: v.object({}), timeoutMs: 1_234, create: () => () => undefined };
  const steps = new StepRegistry(new Map([...BUILTIN_STEPS, ['with-budget', withBudget]]));
  const drafts = [
    { kind: 'cluster' as const, name: 'c', doc: { targets: ['127.0.0.1:1'] } },
    { kind: 'route' as const, name: 'r', doc: { cluster: 'c', steps: [{ code: 'with-budget' }, { code: 'with-budget', timeoutMs: 50 }, { code: 'echo' }] } },
  ];
  const r = compile({ tenant: 'default', published: [], drafts }, undefined, { steps });
  assert.equal(r.ok, true, JSON.stringify(r.issues));
  if (!r.ok) return;
  const t = r.generation.tenants.default!.routes[0]!.terminal;
  assert.equal(t.type, 'cluster');
  if (t.type !== 'cluster') return;
  assert.deepEqual(t.steps.map((s) => (s.kind === 'step' ? s.timeoutMs : null)), [1_234, 50, undefined]);
});
