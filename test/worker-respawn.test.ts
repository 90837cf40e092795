import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { canBind } from './helpers/ports.js';
import { BOUNDED, isRunning, waitFor } from './helpers/wait.js';
import type { WorkerStatus } from './helpers/admin.js';


async function clusterStatus(gw: Gateway): Promise<{ supervisor: { pid: number }; workers: WorkerStatus[] }> {
  const r = await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token: gw.tokens.ops });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

/** The per-process part of a data-plane traceId: `w<slot>-<random>`, fresh in every worker process. */
const processTag = (traceId: string) => /^(w\d+-[^-]+)-/.exec(traceId)?.[1];

test('a worker killed with SIGKILL is replaced: a new one serves within 2 s and cluster status shows the restart', BOUNDED, async (t) => {
  const gw = await startGateway(t, { workers: 2, keys: [{ id: 'ops', scopes: ['cluster:read'] }] });
  const before = await clusterStatus(gw);
  assert.equal(before.workers.length, 2);
  for (const w of before.workers) {
    assert.equal(w.state, 'listening');
    assert.equal(w.restarts, 0);
    assert.ok(typeof w.pid === 'number' && isRunning(w.pid), `worker ${w.slot} pid ${w.pid} runs`);
  }
  const victim = before.workers.find((w) => w.slot === 0)!;
  const survivor = before.workers.find((w) => w.slot === 1)!;

  // Learn the victim's trace tag, so an answer from its replacement can be told apart.
  const oldTag = await waitFor(
    'an answer from worker 0',
    async () => {
      const r = await request(`${gw.dataUrl}/`);
      const tag = processTag(r.json?.traceId ?? '');
      return tag?.startsWith('w0-') ? tag : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 0 },
  );

  const killedAt = Date.now();
  process.kill(victim.pid!, 'SIGKILL');
  const unexpected: string[] = [];

  // The replacement answers on the data port within 2 s of the kill.
  const newTag = await waitFor(
    'the replacement of worker 0 to answer on the data port',
    async () => {
      const r = await request(`${gw.dataUrl}/`, { timeoutMs: 1_000 }).catch(() => null);
      if (!r) return undefined;
      if (r.status !== 503) unexpected.push(`${r.status} ${r.text}`);
      const tag = processTag(r.json?.traceId ?? '');
      return tag?.startsWith('w0-') && tag !== oldTag ? tag : undefined;
    },
    { timeoutMs: 2_000, intervalMs: 5 },
  );
  t.diagnostic(`replacement ${newTag} answered ${Date.now() - killedAt} ms after the kill`);
  assert.deepEqual(unexpected, [], 'every answer meanwhile is the not-published 503');

  const after = await clusterStatus(gw);
  const slot0 = after.workers.find((w) => w.slot === 0)!;
  const slot1 = after.workers.find((w) => w.slot === 1)!;
  assert.notEqual(slot0.pid, victim.pid, 'slot 0 has a new process');
  assert.ok(isRunning(slot0.pid!), 'the new worker runs');
  assert.ok(!isRunning(victim.pid!), 'the killed worker is gone');
  assert.equal(slot0.state, 'listening');
  assert.equal(slot0.restarts, 1, 'cluster status counts the restart');
  assert.equal(slot1.pid, survivor.pid, 'the other worker was left alone');
  assert.equal(slot1.restarts, 0);
  assert.ok(Date.parse(slot0.startedAt!) >= Date.parse(victim.startedAt!), 'startedAt moved on');
});

test('when the supervisor is killed with SIGKILL every worker is gone within 5 s and the data port is free', BOUNDED, async (t) => {
  const gw = await startGateway(t, { workers: 2, keys: [{ id: 'ops', scopes: ['cluster:read'] }] });
  const status = await clusterStatus(gw);
  assert.equal(status.supervisor.pid, gw.pid, 'the supervisor is the process we started');
  const pids = status.workers.map((w) => w.pid!);
  assert.equal(pids.length, 2);
  for (const pid of pids) assert.ok(isRunning(pid), `worker ${pid} runs`);

  process.kill(gw.pid, 'SIGKILL'); // the supervisor only, not its process group
  const exit = await gw.exited;
  assert.equal(exit.signal, 'SIGKILL');

  await waitFor(
    `workers ${pids.join(', ')} to exit after the supervisor died`,
    () => pids.every((pid) => !isRunning(pid)),
    { timeoutMs: 5_000 },
  );
  assert.ok(await canBind(gw.dataPort), 'no orphan holds the data port');
});
