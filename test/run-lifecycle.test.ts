import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { buildConfig, childEnv, exitWithin, READY_LINE, spawnRun, startGateway, tempDir, writeJson } from './helpers/gateway.js';
import { canBind, freePorts, occupyPort } from './helpers/ports.js';
import { request } from './helpers/http.js';
import { BOUNDED, isRunning, waitFor } from './helpers/wait.js';

const EXIT_TIMEOUT_MS = 15_000;

async function workerPids(adminUrl: string, token: string): Promise<number[]> {
  const r = await request(`${adminUrl}/api/v1/sys/cluster/status`, { token });
  assert.equal(r.status, 200, r.text);
  return r.json.workers.map((w: { pid: number }) => w.pid);
}

test('run exits 10 on an invalid config file, before printing a ready line', BOUNDED, async (t) => {
  const [dataPort, adminPort] = await freePorts(2);
  const { config, env } = buildConfig({ dataPort: dataPort!, adminPort: adminPort!, keys: [{ id: 'root', scopes: ['*'] }] });
  config.listen.bogus = true;
  const file = writeJson(join(tempDir(t), 'worker.json'), config);
  const p = spawnRun(t, ['run', '--config', file], childEnv(env));
  const r = await exitWithin(p, EXIT_TIMEOUT_MS);
  assert.equal(r.timedOut, false, 'run exits on its own');
  assert.equal(r.code, 10, p.stderr());
  assert.doesNotMatch(p.stdout(), /switchyard ready/);
  assert.ok(await canBind(adminPort!), 'the admin port was never bound (or was released)');
});

test('run exits 10 when a key reads its token from an unset environment variable', BOUNDED, async (t) => {
  const [dataPort, adminPort] = await freePorts(2);
  const { config } = buildConfig({ dataPort: dataPort!, adminPort: adminPort!, keys: [{ id: 'root', scopes: ['*'] }] });
  const file = writeJson(join(tempDir(t), 'worker.json'), config);
  const p = spawnRun(t, ['run', '--config', file], childEnv()); // SY_TEST_TOKEN_0 not set
  const r = await exitWithin(p, EXIT_TIMEOUT_MS);
  assert.equal(r.code, 10, p.stderr());
  assert.doesNotMatch(p.stdout(), /switchyard ready/);
});

test('run exits 10 on a file that is not JSON', BOUNDED, async (t) => {
  const file = writeJson(join(tempDir(t), 'worker.json'), '{ not json');
  const p = spawnRun(t, ['run', '--config', file]);
  const r = await exitWithin(p, EXIT_TIMEOUT_MS);
  assert.equal(r.code, 10, p.stderr());
});

test('run exits 11 when the data port is already taken by another process', BOUNDED, async (t) => {
  const [dataPort, adminPort] = await freePorts(2);
  const holder = await occupyPort(dataPort!);
  t.after(() => holder.close());
  const { config, env } = buildConfig({ dataPort: dataPort!, adminPort: adminPort!, keys: [{ id: 'root', scopes: ['*'] }], workers: 2 });
  const file = writeJson(join(tempDir(t), 'worker.json'), config);
  const p = spawnRun(t, ['run', '--config', file], childEnv(env));
  const r = await exitWithin(p, EXIT_TIMEOUT_MS);
  assert.equal(r.timedOut, false, 'run exits on its own');
  assert.equal(r.code, 11, p.stderr());
  assert.doesNotMatch(p.stdout(), /switchyard ready/);
  assert.ok(await canBind(adminPort!), 'the admin port is released after the binding failure');
});

test('run exits 11 when the admin port is already taken by another process', BOUNDED, async (t) => {
  const [dataPort, adminPort] = await freePorts(2);
  const holder = await occupyPort(adminPort!);
  t.after(() => holder.close());
  const { config, env } = buildConfig({ dataPort: dataPort!, adminPort: adminPort!, keys: [{ id: 'root', scopes: ['*'] }] });
  const file = writeJson(join(tempDir(t), 'worker.json'), config);
  const p = spawnRun(t, ['run', '--config', file], childEnv(env));
  const r = await exitWithin(p, EXIT_TIMEOUT_MS);
  assert.equal(r.timedOut, false, 'run exits on its own');
  assert.equal(r.code, 11, p.stderr());
  assert.doesNotMatch(p.stdout(), /switchyard ready/);
  assert.ok(await canBind(dataPort!), 'no worker holds the data port');
});

test('the ready line is the only stdout line and names both addresses, which answer', BOUNDED, async (t) => {
  const gw = await startGateway(t, { workers: 2, keys: [{ id: 'root', scopes: ['*'] }] });
  const m = READY_LINE.exec(gw.readyLine);
  assert.ok(m, gw.readyLine);
  assert.equal(gw.dataUrl, `http://127.0.0.1:${gw.dataPort}`);
  assert.equal(gw.adminUrl, `http://127.0.0.1:${gw.adminPort}`);
  assert.equal(gw.workers, 2);
  assert.equal(m[4], '0', 'generation 0 before any publish');

  const health = await request(`${gw.adminUrl}/healthz`);
  assert.equal(health.status, 200);
  const data = await request(`${gw.dataUrl}/`);
  assert.equal(data.status, 503);

  const stop = await gw.stop('SIGTERM');
  assert.equal(stop.code, 0, gw.stderr());
  assert.deepEqual(gw.stdout().split('\n').filter(Boolean), [gw.readyLine], 'stdout holds the ready line alone');
  for (const line of gw.stderr().split('\n').filter(Boolean)) {
    assert.doesNotThrow(() => JSON.parse(line), `every stderr line is a JSON log line: ${line}`);
  }
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} drains and exits 0 within the grace period; workers and ports are released`, BOUNDED, async (t) => {
    const graceMs = 5_000;
    const gw = await startGateway(t, { workers: 2, drainGraceMs: graceMs, keys: [{ id: 'root', scopes: ['*'] }] });
    const pids = await workerPids(gw.adminUrl, gw.tokens.root!);
    assert.equal(pids.length, 2);
    for (const pid of pids) assert.ok(isRunning(pid), `worker ${pid} runs before the signal`);

    const stop = await gw.stop(signal, graceMs);
    assert.equal(stop.timedOut, false, `exited within the grace period of ${graceMs} ms`);
    assert.equal(stop.signal, null, 'exited by itself, not by a signal');
    assert.equal(stop.code, 0, gw.stderr());

    await waitFor('every worker to exit', () => pids.every((pid) => !isRunning(pid)), { timeoutMs: 2_000 });
    assert.ok(await canBind(gw.dataPort), 'data port released');
    assert.ok(await canBind(gw.adminPort), 'admin port released');
  });
}
