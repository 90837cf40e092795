import { test } from 'node:test';
import assert from 'node:assert/strict';
import { circuitBreaker } from '../../src/steps/circuit-breaker.js';
import type { Flow, StepEnv } from '../../src/steps/step.js';
import { StepStates } from '../../src/worker/step-states.js';

/** The breaker only uses onDone: a flow that records the hooks, and ends with a status. */
function fakeFlow(): { flow: Flow; end: (status: number, stepAnswered?: boolean) => void } {
  const hooks: ((s: number, byStep: boolean) => void)[] = [];
  return { flow: { onDone: (h: (s: number, byStep: boolean) => void) => hooks.push(h) } as unknown as Flow, end: (s, byStep = false) => hooks.forEach((h) => h(s, byStep)) };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const env = {} as StepEnv;
const states = new StepStates();
const status = (o: unknown) => (o as { status?: number } | undefined)?.status;

test('half-open: only the probe decides; a request admitted while closed that ends late does not', async () => {
  // Regression: any request ending during half-open closed the circuit and let more probes through.
  const run = circuitBreaker.create!({ failures: 2, windowMs: 10_000, openMs: 50 }, { bucket: 'cb-late', tenant: 't', env, state: states.of('cb-late') });
  const slow = fakeFlow();
  assert.equal(run(slow.flow), undefined, 'admitted while closed');
  for (let i = 0; i < 2; i++) {
    const f = fakeFlow();
    run(f.flow);
    f.end(502);
  }
  assert.equal(status(run(fakeFlow().flow)), 503, 'open');
  await sleep(70);
  const probe = fakeFlow();
  assert.equal(run(probe.flow), undefined, 'the probe goes through');
  slow.end(200);
  assert.equal(status(run(fakeFlow().flow)), 503, 'the probe is still in flight: others wait');
  probe.end(200);
  assert.equal(run(fakeFlow().flow), undefined, 'the probe succeeded: closed');
});

test('half-open: a probe whose client left decides nothing; the next request probes', async () => {
  const run = circuitBreaker.create!({ failures: 1, windowMs: 10_000, openMs: 50 }, { bucket: 'cb-499', tenant: 't', env, state: states.of('cb-499') });
  const f = fakeFlow();
  run(f.flow);
  f.end(502);
  await sleep(70);
  const probe = fakeFlow();
  assert.equal(run(probe.flow), undefined);
  probe.end(499);
  const next = fakeFlow();
  assert.equal(run(next.flow), undefined, 'a new probe');
  assert.equal(status(run(fakeFlow().flow)), 503, 'one probe at a time: not closed by the 499');
  next.end(503);
  assert.equal(status(run(fakeFlow().flow)), 503, 'the real probe failed: open again');
});

test('the state belongs to the step’s bucket: a rebuilt step with the same bucket keeps an open circuit', () => {
  const settings = { failures: 1, windowMs: 10_000, openMs: 60_000 };
  const first = circuitBreaker.create!(settings, { bucket: 'cb-kept', tenant: 't', env, state: states.of('cb-kept') });
  const f = fakeFlow();
  first(f.flow);
  f.end(502);
  const rebuilt = circuitBreaker.create!(settings, { bucket: 'cb-kept', tenant: 't', env, state: states.of('cb-kept') });
  assert.equal(status(rebuilt(fakeFlow().flow)), 503);
  const other = circuitBreaker.create!(settings, { bucket: 'cb-other', tenant: 't', env, state: states.of('cb-other') });
  assert.equal(other(fakeFlow().flow), undefined, 'another bucket starts closed');
});

test('5xx answers a later step gave (not the upstream) neither open the circuit nor decide a probe', () => {
  // Regression: a concurrency-limit after the breaker answered 503 twice and the breaker
  // opened on a healthy upstream.
  const run = circuitBreaker.create!({ failures: 2, windowMs: 10_000, openMs: 50 }, { bucket: 'cb-step', tenant: 't', env, state: states.of('cb-step') });
  for (let i = 0; i < 5; i++) {
    const f = fakeFlow();
    assert.equal(run(f.flow), undefined);
    f.end(503, true);
  }
  assert.equal(run(fakeFlow().flow), undefined, 'still closed');
  for (let i = 0; i < 2; i++) {
    const f = fakeFlow();
    run(f.flow);
    f.end(502);
  }
  assert.equal(status(run(fakeFlow().flow)), 503, 'upstream failures still open it');
});
