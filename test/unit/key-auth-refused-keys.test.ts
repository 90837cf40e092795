import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { keyAuth } from '../../src/steps/key-auth.js';
import type { Flow, StepEnv } from '../../src/steps/step.js';
import { freshState } from '../../src/steps/step-state.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function flowWith(key: string): Flow {
  return { req: { header: (n: string) => (n === 'x-api-key' ? key : undefined), headers: ['x-api-key', key], query: null, queryPairs: [] }, vars: {}, query: null, setHeader() {}, removeHeader() {} } as unknown as Flow;
}

test('key-auth keeps no memory of refused keys, whatever their number and size', () => {
  // Regression: every refused key was cached by its raw text (up to 10,000 of up to
  // 16 KB each, about 150 MB a worker), so any client could fill the worker's memory.
  const run = keyAuth.create!(
    { header: 'x-api-key', keys: [{ id: 'app', sha256: createHash('sha256').update('good').digest('hex') }], consumerHeader: 'x-consumer-id', keepCredential: false } as never,
    { bucket: 'ka', tenant: 't', env: {} as StepEnv, state: freshState },
  );
  assert.equal(run(flowWith('good')), undefined);
  gc();
  const before = process.memoryUsage().heapUsed;
  const filler = 'k'.repeat(15_000);
  for (let i = 0; i < 2_000; i++) assert.equal((run(flowWith(`${i}${filler}`)) as { status: number }).status, 401);
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  assert.ok(grown < 5_000_000, `the heap grew by ${(grown / 1e6).toFixed(1)} MB for 2,000 refused 15 KB keys (30 MB if they were kept)`);
  assert.equal(run(flowWith('good')), undefined, 'the accepted key still passes');
});
