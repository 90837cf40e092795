import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { argvOf, childrenOf } from './helpers/proc.js';
import { WORKER_V8_FLAGS } from '../src/supervisor/worker-pool.js';

test('every worker runs with the V8 flags of WORKER_V8_FLAGS, then SWITCHYARD_WORKER_NODE_ARGS', { timeout: 60_000 }, async (t) => {
  assert.ok(WORKER_V8_FLAGS.includes('--no-allocation-site-pretenuring'));
  const gw = await startGateway(t, { workers: 2, env: { SWITCHYARD_WORKER_NODE_ARGS: '--stack-size=984' } });
  const workers = childrenOf(gw.pid).map(argvOf);
  assert.equal(workers.length, 2, 'two workers');
  for (const argv of workers) {
    for (const flag of WORKER_V8_FLAGS) assert.ok(argv.includes(flag), `${flag} in ${argv.join(' ')}`);
    // The operator's flags come last, so one of them can still turn a default flag back.
    assert.ok(argv.indexOf('--stack-size=984') > argv.indexOf(WORKER_V8_FLAGS[0]!), argv.join(' '));
  }
  // The supervisor itself keeps node's defaults.
  const own = argvOf(gw.pid);
  assert.ok(!own.includes(WORKER_V8_FLAGS[0]!), own.join(' '));
});
