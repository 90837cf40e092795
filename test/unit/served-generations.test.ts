import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServedGenerations } from '../../src/worker/served-generations.js';
import type { Runtime } from '../../src/worker/runtime.js';

/** A runtime with `inFlight` requests; `end()` ends one, and the last one after retire() drains it. */
function fakeRuntime(generation: number, inFlight: number) {
  let drained: (() => void) | undefined;
  let retired = false;
  const runtime = {
    generation,
    requestsInFlight: () => inFlight,
    retire(d?: () => void) {
      retired = true;
      drained = d;
      if (inFlight === 0) drained?.();
    },
  } as unknown as Runtime;
  const end = () => {
    if (--inFlight === 0 && retired) drained?.();
  };
  return { runtime, end };
}

test('the current generation first, then each replaced one with requests in flight, newest first, until it drains', () => {
  const served = new ServedGenerations();
  const g1 = fakeRuntime(1, 2);
  const g2 = fakeRuntime(2, 1);
  const g3 = fakeRuntime(3, 0);
  const g4 = fakeRuntime(4, 0);
  assert.deepEqual(served.list(null), []);
  assert.deepEqual(served.list(g1.runtime), [{ generation: 1, inFlight: 2 }]);

  served.retire(g1.runtime);
  served.retire(g2.runtime);
  served.retire(g3.runtime); // nothing in flight: never listed
  assert.deepEqual(served.list(g4.runtime), [
    { generation: 4, inFlight: 0 },
    { generation: 2, inFlight: 1 },
    { generation: 1, inFlight: 2 },
  ]);

  g1.end();
  g2.end();
  assert.deepEqual(served.list(g4.runtime), [
    { generation: 4, inFlight: 0 },
    { generation: 1, inFlight: 1 },
  ]);
  g1.end();
  assert.deepEqual(served.list(g4.runtime), [{ generation: 4, inFlight: 0 }]);
});
