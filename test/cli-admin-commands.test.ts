import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { runCli } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { BOUNDED } from './helpers/wait.js';

test('switchyard status prints the cluster status and exits 0 with cluster:read', BOUNDED, async (t) => {
  const gw = await startGateway(t, {
    workers: 2,
    keys: [
      { id: 'ops', scopes: ['cluster:read'] },
      { id: 'cfg', scopes: ['config:*'] },
    ],
  });

  const r = await runCli(['status', '--admin', gw.adminUrl, '--token', gw.tokens.ops!]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.json.supervisor.pid, gw.pid);
  assert.equal(r.json.generation, 0);
  assert.equal(r.json.volume, 'memory');
  assert.equal(r.json.readiness.ready, true, 'the node is ready: what /readyz says');
  assert.deepEqual(r.json.readiness.checks.workers, { ok: true, ready: 2, total: 2, generation: 0 });
  assert.equal(r.json.workers.length, 2);
  assert.deepEqual(r.json.workers.map((w: { slot: number }) => w.slot).sort(), [0, 1]);
  for (const w of r.json.workers) {
    assert.equal(typeof w.pid, 'number');
    assert.equal(w.state, 'listening');
    assert.equal(w.generation, 0);
    assert.equal(w.restarts, 0);
    assert.ok(!Number.isNaN(Date.parse(w.startedAt)), `startedAt ${w.startedAt}`);
  }
  // the same answer as the REST call, up to the clock
  const rest = await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token: gw.tokens.ops });
  assert.deepEqual(rest.json.workers, r.json.workers);

  await t.test('without cluster:read: the 403 envelope and exit 2', async () => {
    const denied = await runCli(['status', '--admin', gw.adminUrl, '--token', gw.tokens.cfg!]);
    assert.equal(denied.code, 2, denied.stdout);
    assert.equal(denied.json.code, 'Svc.Auth.Scope');
    assert.match(denied.json.message, /cluster:read/);
  });

  await t.test('without a token: the 401 envelope and exit 2', async () => {
    const anon = await runCli(['status', '--admin', gw.adminUrl]);
    assert.equal(anon.code, 2, anon.stdout);
    assert.equal(anon.json.code, 'Svc.Auth.Unauthenticated');
  });
});

test('admin commands exit 4 when the admin port cannot be reached', BOUNDED, async () => {
  const port = await freePort(); // free now, so nothing answers there
  for (const cmd of ['status', 'whoami']) {
    const r = await runCli([cmd, '--admin', `http://127.0.0.1:${port}`, '--token', 'x'.repeat(40)]);
    assert.equal(r.code, 4, `${cmd}: ${r.stdout} ${r.stderr}`);
  }
});
