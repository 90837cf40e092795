import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { startGateway } from './helpers/gateway.js';
import { WORKER_V8_FLAGS } from '../src/supervisor/worker-pool.js';

/** The command lines of `pid`'s running children, from /proc. */
function childCommands(pid: number): string[][] {
  const kids = readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));
  return kids.map((k) => readFileSync(`/proc/${k}/cmdline`, 'utf8').split('\0').filter(Boolean));
}

test('every worker runs with the V8 flags of WORKER_V8_FLAGS, then SWITCHYARD_WORKER_NODE_ARGS', { timeout: 60_000 }, async (t) => {
  assert.ok(WORKER_V8_FLAGS.includes('--no-allocation-site-pretenuring'));
  const gw = await startGateway(t, { workers: 2, env: { SWITCHYARD_WORKER_NODE_ARGS: '--stack-size=984' } });
  const workers = childCommands(gw.pid);
  assert.equal(workers.length, 2, 'two workers');
  for (const argv of workers) {
    for (const flag of WORKER_V8_FLAGS) assert.ok(argv.includes(flag), `${flag} in ${argv.join(' ')}`);
    // The operator's flags come last, so one of them can still turn a default flag back.
    assert.ok(argv.indexOf('--stack-size=984') > argv.indexOf(WORKER_V8_FLAGS[0]!), argv.join(' '));
  }
  // The supervisor itself keeps node's defaults.
  const own = readFileSync(`/proc/${gw.pid}/cmdline`, 'utf8').split('\0');
  assert.ok(!own.includes(WORKER_V8_FLAGS[0]!), own.join(' '));
});
