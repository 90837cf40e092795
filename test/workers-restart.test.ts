import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus, publishRaw } from './helpers/admin.js';
import { runCli } from './helpers/cli.js';
import { isRunning, sleep, waitFor } from './helpers/wait.js';
import { uwsSupport } from '../src/shared/uws-support.js';
import { versionedPackage } from './helpers/versioned-package.js';

const CLIENTS = 16;

for (const engine of uwsSupport().ok ? (['uws', 'node'] as const) : (['node'] as const))
  test(`workers restart under 16 keep-alive clients: every worker replaced one at a time, no request fails (${engine} engine)`, { timeout: 120_000 }, async (t) => {
    const up = await startUpstream(t);
    const pkg = versionedPackage(t);
    const gw = await startGateway(t, { engine, workers: 2, keys: [ROOT_KEY], drainGraceMs: 5_000, edit: (c) => void (c.steps = { packages: [pkg.dir] }) });
    await apply(gw, [
      ['cluster', 'api', { targets: [up.target] }],
      ['route', 'api', { pathPrefix: '/api', cluster: 'api', steps: [{ code: 'stamp-build' }] }],
      ['route', 'ping', { pathPrefix: '/ping', directResponse: { statusCode: 200, body: 'pong' } }],
    ]);
    const before = (await clusterStatus(gw)).workers;
    assert.equal(before.length, 2);

    const clients = Array.from({ length: CLIENTS }, () => new Client(gw.dataUrl, { pipelining: 1, keepAliveTimeout: 30_000 }));
    t.after(() => Promise.all(clients.map((c) => c.destroy())));
    let stop = false;
    let ok = 0;
    const failures: string[] = [];
    const builds = new Map<string, number>(); // x-step-build -> answers, over the whole load
    const loops = clients.map(async (c, i) => {
      let served = 0;
      c.on('connect', () => (served = 0));
      for (let n = 0; !stop; n++) {
        const path = n % 2 === 0 ? `/api/${i}/${n}` : '/ping';
        try {
          const r = await c.request({ path, method: 'GET' });
          await r.body.text();
          served++;
          const build = r.headers['x-step-build'];
          if (typeof build === 'string') builds.set(build, (builds.get(build) ?? 0) + 1);
          if (r.statusCode === 200) ok++;
          else failures.push(`${path}: ${r.statusCode}`);
        } catch (err) {
          failures.push(`${path}: ${(err as Error).message} (after ${served} answers on its connection)`);
        }
      }
    });
    await sleep(500);
    pkg.write(2); // the upgrade on disk: what answers until the restart is still v1
    await sleep(200);
    assert.equal((await request(`${gw.dataUrl}/api/x`)).headers['x-step-build'], 'v1');
    const cli = await runCli(['workers', 'restart', '--admin', gw.adminUrl, '--token', gw.tokens.root!], { timeoutMs: 60_000 });
    await sleep(500); // load after the restart too, on the replacements
    stop = true;
    await Promise.all(loops);

    assert.equal(cli.code, 0, `exit ${cli.code}; stderr ${cli.stderr}; stdout ${cli.stdout}`);
    const answer = cli.json as { state: string; total: number; replaced: { slot: number; oldPid: number; newPid: number }[] };
    assert.equal(answer.state, 'done', cli.stdout);
    assert.deepEqual(answer.replaced.map((r) => r.slot), [0, 1]);
    assert.match(cli.stderr, /worker 1\/2 replaced \(slot 0: pid \d+ -> pid \d+\)/);
    assert.match(cli.stderr, /worker 2\/2 replaced \(slot 1: pid \d+ -> pid \d+\)/);
    t.diagnostic(`${ok} requests answered 200 during the load; ${failures.length} failed`);
    assert.deepEqual(failures, [], 'no request failed during the restart');
    assert.ok(ok > 100, `the load ran (${ok} answers)`);
    t.diagnostic(`answers by step build over the load: ${JSON.stringify(Object.fromEntries(builds))}`);
    assert.ok((builds.get('v1') ?? 0) > 0 && (builds.get('v2') ?? 0) > 0, 'v1 answered before the restart, v2 after');
    for (let i = 0; i < 10; i++) assert.equal((await request(`${gw.dataUrl}/api/after/${i}`)).headers['x-step-build'], 'v2', 'the new version answers afterwards');
    const sys = await request(`${gw.adminUrl}/api/v1/sys/steps`, { token: gw.tokens.root });
    assert.equal((sys.json.steps as { code: string; version?: string }[]).find((x) => x.code === 'stamp-build')!.version, '2.0.0', 'the supervisor reads the new version too');

    // Every pid changed; the old processes are gone once drained; restarts counted.
    const after = await waitFor(
      'the replaced workers gone',
      async () => {
        const s = await clusterStatus(gw);
        return s.workers.length === 2 && s.workers.every((w) => w.state === 'listening') ? s.workers : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    for (const old of before) {
      const now = after.find((w) => w.slot === old.slot)!;
      assert.notEqual(now.pid, old.pid, `slot ${old.slot} has a new process`);
      assert.equal(now.restarts, 1);
      assert.equal(answer.replaced.find((r) => r.slot === old.slot)?.oldPid, old.pid);
      assert.equal(answer.replaced.find((r) => r.slot === old.slot)?.newPid, now.pid);
      await waitFor(`old pid ${old.pid} exited`, () => !isRunning(old.pid!), { timeoutMs: 10_000 });
    }
    const metrics = await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root });
    assert.match(metrics.text, /^switchyard_worker_replacements_total\{reason="restart"\} 2$/m);
  });

test('workers restart: a second start while one runs is refused 409; the progress is readable; sys:write needed', { timeout: 60_000 }, async (t) => {
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY, { id: 'reader', scopes: ['sys:read', 'cluster:read'] }] });
  const none = await request(`${gw.adminUrl}/api/v1/sys/workers/restart`, { token: gw.tokens.root });
  assert.equal(none.status, 404);
  assert.equal((none.json as { code: string }).code, 'Svc.Workers.NoRestart');
  const denied = await request(`${gw.adminUrl}/api/v1/sys/workers/restart`, { method: 'POST', token: gw.tokens.reader, body: {} });
  assert.equal(denied.status, 403, denied.text);

  const first = await request(`${gw.adminUrl}/api/v1/sys/workers/restart`, { method: 'POST', token: gw.tokens.root, body: {} });
  assert.equal(first.status, 202, first.text);
  const second = await request(`${gw.adminUrl}/api/v1/sys/workers/restart`, { method: 'POST', token: gw.tokens.root, body: {} });
  assert.equal(second.status, 409, second.text);
  assert.equal((second.json as { code: string }).code, 'Svc.Workers.RestartRunning');
  // A publish waits for the restart's end: the workers not yet replaced may run other package builds.
  const publishing = await publishRaw(gw);
  assert.equal(publishing.status, 409, publishing.text);
  assert.equal(publishing.json.code, 'Svc.Publish.WorkersRestarting');

  // A starting replacement and a draining old worker show beside the slot's row while it runs.
  const seen = new Set<string>();
  const done = await waitFor(
    'the restart done',
    async () => {
      const s = await clusterStatus(gw);
      for (const w of s.workers) seen.add(w.state);
      const r = await request(`${gw.adminUrl}/api/v1/sys/workers/restart`, { token: gw.tokens.reader });
      const p = r.json as { state: string; replaced: unknown[] };
      return p.state === 'done' ? p : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 20 },
  );
  assert.equal(done.replaced.length, 2);
  // Two CLIs at once: one restart runs, the other is refused (exit 2 with the envelope).
  const both = await Promise.all([0, 1].map(() => runCli(['workers', 'restart', '--admin', gw.adminUrl, '--token', gw.tokens.root!], { timeoutMs: 60_000 })));
  assert.deepEqual(both.map((c) => c.code).sort(), [0, 2], both.map((c) => c.stderr).join('\n'));
  assert.equal((both.find((c) => c.code === 2)!.json as { code: string }).code, 'Svc.Workers.RestartRunning');
  t.diagnostic(`worker states seen while it ran: ${[...seen].join(', ')}`);
  const list = await runCli(['workers', 'list', '--admin', gw.adminUrl, '--token', gw.tokens.reader!, '--json', 'slot,pid,state,restarts,heapMb']);
  assert.equal(list.code, 0, list.stderr);
  const rows = list.json as { slot: number; restarts: number; heapMb: number }[];
  assert.ok(rows.every((w) => w.restarts === 2 && typeof w.heapMb === 'number'), list.stdout);
});

test('workers restart with a package upgrade that refuses the published settings: the restart fails, no worker is replaced, the old build keeps answering', { timeout: 60_000 }, async (t) => {
  const up = await startUpstream(t);
  const pkg = versionedPackage(t);
  const gw = await startGateway(t, { workers: 1, keys: [ROOT_KEY], edit: (c) => void (c.steps = { packages: [pkg.dir] }) });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'api', { pathPrefix: '/api', cluster: 'api', steps: [{ code: 'stamp-build' }] }],
  ]);
  const pid = (await clusterStatus(gw)).workers[0]!.pid;
  pkg.write(2, true);
  const cli = await runCli(['workers', 'restart', '--admin', gw.adminUrl, '--token', gw.tokens.root!], { timeoutMs: 60_000 });
  assert.notEqual(cli.code, 0, cli.stdout);
  const progress = (await request(`${gw.adminUrl}/api/v1/sys/workers/restart`, { token: gw.tokens.root })).json as { state: string; replaced: unknown[]; error: { message: string } };
  assert.equal(progress.state, 'failed');
  assert.deepEqual(progress.replaced, []);
  assert.match(progress.error.message, /refuse the published configuration \(route api \/steps\/0\/settings\/required: stamp-build: /);
  assert.equal((await clusterStatus(gw)).workers[0]!.pid, pid, 'no worker was replaced');
  assert.equal((await request(`${gw.dataUrl}/api/x`)).headers['x-step-build'], 'v1');
});
