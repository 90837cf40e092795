import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus, publishRaw, setEntity } from './helpers/admin.js';
import { sleep } from './helpers/wait.js';

const CLIENTS = 16;
const LOAD_MS = 10_000;
const PUBLISHES = 20;

test('publish under load: 16 keep-alive clients for 10 s while 20 publishes run: no non-2xx, no socket error, no dropped connection, generation +1 each', { timeout: 120_000 }, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY] });
  const cluster = (headersMs: number) => ({ targets: [up.target], timeouts: { headersMs } });
  const other = (i: number) => ({ pathPrefix: '/other', directResponse: { statusCode: 200, body: `v${i}` } });
  const first = await apply(gw, [
    ['cluster', 'api', cluster(30_000)],
    ['route', 'api', { pathPrefix: '/api', cluster: 'api' }],
    ['route', 'other', other(0)],
  ]);
  assert.equal(first.generation, 1);

  // 16 clients, one keep-alive connection each, requests back to back. Half of them make
  // the upstream wait a little, so requests are in flight across every swap; a quarter
  // send a body.
  let connects = 0;
  let disconnects = 0;
  const disconnectReasons: string[] = [];
  const clients = Array.from({ length: CLIENTS }, () => {
    const c = new Client(gw.dataUrl, { pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 10_000, bodyTimeout: 10_000 });
    c.on('connect', () => connects++);
    c.on('disconnect', (_o, _c, err) => {
      disconnects++;
      disconnectReasons.push(String(err?.message ?? err));
    });
    return c;
  });
  t.after(() => Promise.all(clients.map((c) => c.destroy())));

  let ok = 0;
  const non2xx: string[] = [];
  const errors: string[] = [];
  // The load runs for 10 s, and longer if the publishes have not all finished by then
  // (a slow machine), so that every publish happens under load.
  const loadStart = Date.now();
  let stopAt = Infinity;
  const loops = clients.map(async (c, i) => {
    let n = 0;
    while (Date.now() < stopAt) {
      n++;
      try {
        const post = i % 4 === 0;
        const r = await c.request({
          path: `/api/c${i}/${n}?n=${n}`,
          method: post ? 'POST' : 'GET',
          headers: i % 2 === 1 ? { 'x-up-delay-ms': '20' } : {},
          body: post ? `body ${i} ${n}`.repeat(50) : undefined,
        });
        const text = await r.body.text();
        if (r.statusCode >= 200 && r.statusCode < 300) ok++;
        else non2xx.push(`${r.statusCode} ${text.slice(0, 200)}`);
      } catch (err) {
        errors.push(`client ${i}: ${(err as Error).message}`);
      }
    }
  });

  // Meanwhile: 20 publishes, one after the other, spread over the load window. Each
  // changes the directResponse route; every third also changes the cluster (new pools,
  // the old ones retire while requests are still running on them).
  const generations: number[] = [];
  const publishErrors: string[] = [];
  await sleep(500);
  const spacing = (LOAD_MS - 1_500) / PUBLISHES;
  for (let i = 1; i <= PUBLISHES; i++) {
    const t0 = Date.now();
    await setEntity(gw, 'route', 'other', other(i));
    if (i % 3 === 0) await setEntity(gw, 'cluster', 'api', cluster(30_000 - i));
    const r = await publishRaw(gw);
    if (r.status !== 200 || r.json?.ok !== true) publishErrors.push(`publish ${i}: ${r.status} ${r.text}`);
    else {
      generations.push(r.json.generation);
      const expected = i % 3 === 0 ? ['cluster/api', 'route/other'] : ['route/other'];
      if (JSON.stringify(r.json.planned) !== JSON.stringify(expected)) publishErrors.push(`publish ${i}: planned ${JSON.stringify(r.json.planned)}`);
    }
    await sleep(Math.max(0, spacing - (Date.now() - t0)));
  }
  const publishesDoneAt = Date.now();
  stopAt = Math.max(loadStart + LOAD_MS, publishesDoneAt + 500);
  await Promise.all(loops);
  const loadMs = Date.now() - loadStart;
  t.diagnostic(
    `${ok} requests ok, ${non2xx.length} non-2xx, ${errors.length} errors; connects ${connects}, disconnects ${disconnects}; ` +
      `load ran ${loadMs} ms, publishes finished ${stopAt - publishesDoneAt} ms before its end; generations ${generations.join(',')}`,
  );

  assert.deepEqual(publishErrors, [], 'every publish succeeded');
  assert.ok(loadMs >= LOAD_MS, `the load ran for ${loadMs} ms`);
  assert.deepEqual(generations, Array.from({ length: PUBLISHES }, (_, i) => i + 2), 'each publish raised the generation by exactly one');
  assert.deepEqual(non2xx.slice(0, 10), [], `non-2xx answers (${non2xx.length})`);
  assert.deepEqual(errors.slice(0, 10), [], `socket errors (${errors.length})`);
  assert.ok(ok > CLIENTS * 20, `the load ran (${ok} requests)`);
  assert.equal(connects, CLIENTS, 'one connection per client: none was dropped and reopened');
  assert.deepEqual(disconnectReasons, [], 'no connection closed during the load');

  // The same keep-alive connections now see the last generation.
  for (const c of clients) {
    const r = await c.request({ path: '/other', method: 'GET' });
    assert.equal(await r.body.text(), `v${PUBLISHES}`);
  }
  assert.equal(connects, CLIENTS, 'still the original connections');
  const st = await clusterStatus(gw);
  assert.equal(st.generation, PUBLISHES + 1);
  for (const w of st.workers) assert.equal(w.generation, PUBLISHES + 1);
  assert.equal((await request(`${gw.dataUrl}/other`)).text, `v${PUBLISHES}`);
});
