import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus } from './helpers/admin.js';
import { isRunning, sleep, waitFor } from './helpers/wait.js';

/** A worker idles at about 18 MiB of heap in use and passes 22 within seconds of load (garbage counts until collected). */
const HEAP_MB = 22;
const CLIENTS = 16;

test('a worker past limits.workerHeapMb is replaced with a drain while 16 keep-alive clients load it: no request fails', { timeout: 120_000 }, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY], drainGraceMs: 5_000, edit: (c) => void (c.limits = { workerHeapMb: HEAP_MB }) });
  await apply(gw, [['cluster', 'api', { targets: [up.target] }], ['route', 'api', { pathPrefix: '/api', cluster: 'api' }]]);
  const before = (await clusterStatus(gw)).workers;

  const clients = Array.from({ length: CLIENTS }, () => new Client(gw.dataUrl, { pipelining: 1, keepAliveTimeout: 30_000 }));
  t.after(() => Promise.all(clients.map((c) => c.destroy())));
  let stop = false;
  let ok = 0;
  const failures: string[] = [];
  const loops = clients.map(async (c, i) => {
    for (let n = 0; !stop; n++) {
      try {
        const r = await c.request({ path: `/api/${i}/${n}`, method: 'GET' });
        await r.body.text();
        if (r.statusCode === 200) ok++;
        else failures.push(String(r.statusCode));
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
  });

  const line = (msg: string) => gw.logLines().find((l) => (l as { msg?: string }).msg?.startsWith(msg)) as Record<string, unknown> | undefined;
  try {
    const told = await waitFor('a worker reporting its heap past the bound', () => line('worker heap past limits.workerHeapMb'), { timeoutMs: 30_000, intervalMs: 100 });
    assert.equal(told.limitMb, HEAP_MB);
    assert.ok((told.usedMb as number) > HEAP_MB, `usedMb ${told.usedMb}`);
    // Both workers may pass the bound: the replacement of the one that told first.
    const replaced = await waitFor('the worker replaced', () => gw.logLines().find((l) => (l as { msg?: string }).msg?.startsWith('worker replaced') && (l as { oldPid?: unknown }).oldPid === told.pid) as Record<string, unknown> | undefined, { timeoutMs: 20_000, intervalMs: 100 });
    assert.equal(replaced.how, 'drain');
    assert.equal(replaced.oldPid, told.pid);
    // The load goes on while the replaced worker drains and exits.
    await waitFor('the replaced worker exited', () => !isRunning(replaced.oldPid as number), { timeoutMs: 15_000, intervalMs: 100 });
    await sleep(500);
  } finally {
    stop = true;
    await Promise.all(loops);
  }
  t.diagnostic(`${ok} requests answered during the load; ${failures.length} failed`);
  assert.deepEqual(failures, [], 'no request failed during the replacement');
  assert.ok(ok > 100, `the load ran (${ok})`);
  const after = (await clusterStatus(gw)).workers;
  assert.ok(after.some((w) => !before.some((b) => b.pid === w.pid) && w.restarts >= 1), 'a slot has a new process, counted as a restart');
  const metrics = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root })).text;
  assert.match(metrics, /^switchyard_worker_replacements_total\{reason="heap"\} [1-9]/m);
});
