import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import pg from 'pg';
import { startFleet, startRedis } from './helpers/fleet.js';
import { pgVolumeUrl } from './helpers/volumes.js';
import { publish, setEntity, history } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { issueKey, revokeKeyRaw } from './helpers/keys.js';
import { BOUNDED } from './helpers/wait.js';
import { startGateway, type Gateway } from './helpers/gateway.js';

/** Polls `gw`'s data port until `path` answers `body`; the milliseconds it took. */
async function servedWithin(gw: Gateway, path: string, body: string, limitMs: number, host?: string): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const r = await request(`${gw.dataUrl}${path}`, host ? { headers: { host } } : {});
    if (r.text === body) return performance.now() - t0;
    if (performance.now() - t0 > limitMs) throw new Error(`${gw.dataUrl}${path} still answers ${r.status} ${r.text.slice(0, 80)} after ${limitMs} ms (want ${body})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Waits until `gw`'s workers serve `generation`. */
async function onGeneration(gw: Gateway, token: string, generation: number, limitMs: number): Promise<void> {
  const t0 = performance.now();
  while ((await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token })).json.generation !== generation) {
    if (performance.now() - t0 > limitMs) throw new Error(`${gw.adminUrl} is not on generation ${generation} after ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.99) - 1]!;

test('three nodes on one PostgreSQL: a publish on A is served by B and C within 1 s; a key revoked on B is refused by A and C', BOUNDED, async (t) => {
  const fleet = await startFleet(t, 3);
  const [a, b, c] = fleet.nodes as [Gateway, Gateway, Gateway];
  for (const gw of fleet.nodes) gw.tokens.root = fleet.token;
  const lags: number[] = [];
  for (let i = 1; i <= 20; i++) {
    await setEntity(a, 'route', 'ver', { pathPrefix: '/ver', directResponse: { statusCode: 200, body: `v${i}` } });
    await publish(a);
    const [lb, lc] = await Promise.all([servedWithin(b, '/ver', `v${i}`, 3_000), servedWithin(c, '/ver', `v${i}`, 3_000)]);
    lags.push(lb, lc);
  }
  t.diagnostic(`publish on A -> served on B and C: median ${lags.sort((x, y) => x - y)[lags.length >> 1]!.toFixed(1)} ms, p99 ${p99(lags).toFixed(1)} ms, max ${Math.max(...lags).toFixed(1)} ms`);
  assert.ok(p99(lags) <= 1_000, `p99 ${p99(lags)} ms`);
  const status = await request(`${c.adminUrl}/api/v1/sys/cluster/status`, { token: fleet.token });
  assert.equal(status.json.volume, 'postgres');
  assert.equal(status.json.generation, 20);
  const nodes = status.json.fleet as { id: string; generation: number; self: boolean }[];
  assert.equal(nodes.length, 3, JSON.stringify(nodes));
  assert.equal(nodes.filter((n) => n.self).length, 1);

  // One trail: what A did shows in C's history and audit.
  assert.equal((await history(c)).items.length, 20);
  const key = await issueKey(a, fleet.token, 'default', { name: 'ci', scopes: ['config:read'] });
  for (const gw of [a, c]) assert.equal((await request(`${gw.adminUrl}/api/v1/default/config/list/route`, { token: key.token })).status, 200);
  assert.equal((await revokeKeyRaw(b, fleet.token, 'default', key.id)).status, 200);
  const t0 = performance.now();
  for (const gw of [a, c]) assert.equal((await request(`${gw.adminUrl}/api/v1/default/config/list/route`, { token: key.token })).status, 401);
  t.diagnostic(`revoked on B, refused on A and C after ${(performance.now() - t0).toFixed(1)} ms`);
});

test('two nodes publishing at once, 20 times each: 40 generations, strictly increasing, none lost, every node ends on the last', BOUNDED, async (t) => {
  const fleet = await startFleet(t, 2);
  const [a, b] = fleet.nodes as [Gateway, Gateway];
  for (const gw of fleet.nodes) gw.tokens.root = fleet.token;
  // Drafts are shared by the fleet: each node publishes a tenant of its own, so each publish has a change.
  const storm = async (gw: Gateway, who: string) => {
    const got: number[] = [];
    for (let i = 0; i < 20; i++) {
      await setEntity(gw, 'route', `r-${who}`, { pathPrefix: `/${who}`, hosts: [`${who}.example`], directResponse: { statusCode: 200, body: `${who}${i}` } }, `t${who}`);
      got.push((await publish(gw, `t${who}`)).generation);
    }
    return got;
  };
  const [ga, gb] = await Promise.all([storm(a, 'a'), storm(b, 'b')]);
  const all = [...ga, ...gb].sort((x, y) => x - y);
  assert.deepEqual(all, Array.from({ length: 40 }, (_, i) => i + 1), 'every number once: none lost, none twice');
  for (const own of [ga, gb]) assert.ok(own.every((g, i) => i === 0 || g > own[i - 1]!), 'each node sees its publishes strictly increase');
  for (const gw of [a, b]) {
    await servedWithin(gw, '/a', 'a19', 3_000, 'a.example');
    await servedWithin(gw, '/b', 'b19', 3_000, 'b.example');
    const s = await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token: fleet.token });
    assert.equal(s.json.generation, 40);
  }
});

test('a node killed during a publish storm and started again serves the current generation before it listens, and follows', BOUNDED, async (t) => {
  const fleet = await startFleet(t, 2);
  const [a, b] = fleet.nodes as [Gateway, Gateway];
  for (const gw of fleet.nodes) gw.tokens.root = fleet.token;
  let last = 0;
  let storming = true;
  const storm = (async () => {
    // Under the default quota of 30 publishes a minute, spread over the restart.
    for (let i = 1; storming && i <= 25; i++) {
      await setEntity(a, 'route', 'ver', { pathPrefix: '/ver', directResponse: { statusCode: 200, body: `v${i}` } });
      last = (await publish(a)).generation;
      await new Promise((r) => setTimeout(r, 40));
    }
  })();
  while (last < 5) await new Promise((r) => setTimeout(r, 10));
  b.kill();
  await b.exited;
  const before = last;
  const again = await startGateway(t, { dir: b.dir, dataPort: b.dataPort, adminPort: b.adminPort, volume: fleet.volume, keys: [{ id: 'root', scopes: ['*'], token: fleet.token }] });
  const readyGeneration = Number(/generation=(\d+)/.exec(again.readyLine)![1]);
  assert.ok(readyGeneration >= before, `ready on generation ${readyGeneration}, committed before it started: ${before}`);
  await new Promise((r) => setTimeout(r, 300));
  storming = false;
  await storm;
  await servedWithin(again, '/ver', `v${last}`, 1_000);
  t.diagnostic(`killed at generation ${before}, ready on ${readyGeneration}, the storm ended on ${last}`);
});

const PG_VERSION = '15';
/** Stops or starts the machine's PostgreSQL cluster; starting one that runs is a no-op. */
function pgctl(action: 'stop' | 'start'): void {
  if (action === 'start' && spawnSync('pg_isready', ['-h', '127.0.0.1', '-q']).status === 0) return;
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION, 'main', action], { stdio: 'pipe' });
}

test('PostgreSQL stopped: every node keeps serving with no failed request, admin writes answer 503 Svc.Store.Unavailable; started again, publishes flow without a restart', { timeout: 120_000 }, async (t) => {
  const fleet = await startFleet(t, 2);
  const [a, b] = fleet.nodes as [Gateway, Gateway];
  for (const gw of fleet.nodes) gw.tokens.root = fleet.token;
  await setEntity(a, 'route', 'ver', { pathPrefix: '/ver', directResponse: { statusCode: 200, body: 'v1' } });
  await publish(a);
  await servedWithin(b, '/ver', 'v1', 1_000);

  let sent = 0;
  const failed: string[] = [];
  let loading = true;
  const load = Promise.all(
    [a, b].map(async (gw) => {
      while (loading) {
        const r = await request(`${gw.dataUrl}/ver`).catch((e: Error) => ({ status: 0, text: e.message }));
        sent++;
        if (r.status !== 200) failed.push(`${r.status} ${r.text}`);
      }
    }),
  );
  t.after(() => pgctl('start')); // whatever happens, the machine's PostgreSQL comes back
  pgctl('stop');
  try {
    const write = await request(`${a.adminUrl}/api/v1/default/config/set/route/ver`, { method: 'POST', token: fleet.token, body: { pathPrefix: '/ver', directResponse: { statusCode: 200, body: 'v2' } } });
    assert.equal(write.status, 503, write.text);
    assert.equal(write.json.code, 'Svc.Store.Unavailable');
    const go = await request(`${b.adminUrl}/api/v1/default/publish/go`, { method: 'POST', token: fleet.token, body: {} });
    assert.equal(go.status, 503, go.text);
    await new Promise((r) => setTimeout(r, 1_500)); // a few fleet polls with the store down
  } finally {
    pgctl('start');
  }
  const t0 = performance.now();
  for (;;) {
    const w = await request(`${a.adminUrl}/api/v1/default/config/set/route/ver`, { method: 'POST', token: fleet.token, body: { pathPrefix: '/ver', directResponse: { statusCode: 200, body: 'v2' } } });
    if (w.status === 200 || w.status === 201) break;
    assert.ok(performance.now() - t0 < 20_000, `admin writes still fail ${w.status} ${w.text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await publish(a);
  await servedWithin(b, '/ver', 'v2', 2_000);
  loading = false;
  await load;
  t.diagnostic(`${sent} data-plane requests while PostgreSQL was stopped and started; failed: ${failed.length}`);
  assert.deepEqual(failed, []);
  assert.ok(sent > 100);
});

/** An upstream that answers every request with 200. */
async function okUpstream(t: { after(fn: () => void): void }): Promise<string> {
  const srv = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.close());
  return `127.0.0.1:${(srv.address() as { port: number }).port}`;
}

/** Sends `total` requests spread in turn over the nodes, `parallel` at a time; the statuses counted. */
async function spread(nodes: Gateway[], path: string, total: number, parallel = 12): Promise<Record<number, number>> {
  const counts: Record<number, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < total) {
        const i = next++;
        const r = await request(`${nodes[i % nodes.length]!.dataUrl}${path}`);
        counts[r.status] = (counts[r.status] ?? 0) + 1;
      }
    }),
  );
  return counts;
}

test('rate-limit scope cluster, burst 30, 3 nodes x 2 workers: exactly 30 of 200 pass; Redis stopped: allow lets traffic through, deny answers 503, both counted', { timeout: 120_000 }, async (t) => {
  const redis = await startRedis(t);
  const fleet = await startFleet(t, 3, 2, (c) => (c.redis = { url: redis.url, keyPrefix: `sy-${process.pid}:` }));
  const [a] = fleet.nodes as [Gateway];
  for (const gw of fleet.nodes) gw.tokens.root = fleet.token;
  await setEntity(a, 'cluster', 'up', { targets: [await okUpstream(t)] });
  const limited = (onStoreDown: string) => [{ code: 'rate-limit', settings: { requestsPerSecond: 0.001, burst: 30, scope: 'cluster', onStoreDown } }];
  await setEntity(a, 'route', 'exact', { pathPrefix: '/exact', cluster: 'up', steps: limited('allow') });
  await setEntity(a, 'route', 'open', { pathPrefix: '/open', cluster: 'up', steps: limited('allow') });
  await setEntity(a, 'route', 'shut', { pathPrefix: '/shut', cluster: 'up', steps: limited('deny') });
  const { generation } = await publish(a);
  for (const gw of fleet.nodes) await onGeneration(gw, fleet.token, generation, 1_000);

  const counts = await spread(fleet.nodes, '/exact', 200);
  t.diagnostic(`scope cluster, burst 30, 200 requests over 3 nodes x 2 workers: ${JSON.stringify(counts)}`);
  assert.equal(counts[200], 30, JSON.stringify(counts));
  assert.equal(counts[429], 170);

  // Buckets nobody has used yet: an exhausted one keeps refusing from its workers' cache, Redis or not.
  await redis.stop();
  const open = await spread(fleet.nodes, '/open', 60);
  const shut = await spread(fleet.nodes, '/shut', 60);
  t.diagnostic(`Redis down: allow ${JSON.stringify(open)}, deny ${JSON.stringify(shut)}`);
  assert.equal(open[200], 60, `allow: ${JSON.stringify(open)}`);
  assert.equal(shut[503], 60, `deny: ${JSON.stringify(shut)}`);
  let allow = 0;
  let deny = 0;
  for (const gw of fleet.nodes) {
    const text = (await request(`${gw.adminUrl}/metrics`, { token: fleet.token })).text;
    allow += Number(/switchyard_rate_limit_store_down_total\{on_store_down="allow"\} (\d+)/.exec(text)?.[1] ?? 0);
    deny += Number(/switchyard_rate_limit_store_down_total\{on_store_down="deny"\} (\d+)/.exec(text)?.[1] ?? 0);
  }
  assert.ok(allow > 0 && deny > 0, `counted: allow ${allow}, deny ${deny}`);
});

test('regression: drafts written on B while A publishes are never lost (a publish clears only the drafts it read)', BOUNDED, async (t) => {
  const fleet = await startFleet(t, 2);
  const [a, b] = fleet.nodes as [Gateway, Gateway];
  for (const gw of fleet.nodes) gw.tokens.root = fleet.token;
  for (let i = 0; i < 40; i++) await setEntity(a, 'route', `base${i}`, { pathPrefix: `/base${i}`, directResponse: { statusCode: 200 } });
  let publishing = true;
  const publishes = (async () => {
    for (let i = 0; publishing && i < 25; i++) {
      await setEntity(a, 'route', 'tick', { pathPrefix: '/tick', directResponse: { statusCode: 200, body: `t${i}` } });
      await publish(a);
    }
  })();
  const written: string[] = [];
  for (let i = 0; i < 150; i++) {
    await setEntity(b, 'route', `b${i}`, { pathPrefix: `/b${i}`, directResponse: { statusCode: 200 } });
    written.push(`b${i}`);
  }
  publishing = false;
  await publishes;
  const routes = await request(`${a.adminUrl}/api/v1/default/config/list/route`, { token: fleet.token });
  const known = new Set((routes.json.items as { name: string }[]).map((r) => r.name));
  const lost = written.filter((n) => !known.has(n));
  assert.deepEqual(lost, [], `${lost.length} of ${written.length} drafts written on B are in neither drafts nor published`);
});

test('a publish waiting for another node holds nothing: traffic, rate limits and admin reads go on, and it publishes once the lock is free', BOUNDED, async (t) => {
  const fleet = await startFleet(t, 1);
  const [a] = fleet.nodes as [Gateway];
  a.tokens.root = fleet.token;
  await setEntity(a, 'cluster', 'up', { targets: [await okUpstream(t)] });
  await setEntity(a, 'route', 'rl', { pathPrefix: '/rl', cluster: 'up', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 1000, burst: 1000, key: { header: 'x-k' } } }] });
  await publish(a);
  // Another node's publish, as PostgreSQL sees it: the fleet's publish lock held for 3 s.
  const holder = new pg.Client({ connectionString: pgVolumeUrl('x').replace(/\?.*$/, '') });
  await holder.connect();
  t.after(() => holder.end());
  await holder.query('BEGIN');
  await holder.query('SELECT pg_advisory_xact_lock($1)', [0x5357_0001]);
  await setEntity(a, 'route', 'later', { pathPrefix: '/later', directResponse: { statusCode: 200, body: 'later' } });
  const t0 = performance.now();
  const go = publish(a).then(() => performance.now() - t0);
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) {
    statuses.push((await request(`${a.dataUrl}/rl`, { headers: { 'x-k': `k${i}` } })).status);
    await new Promise((r) => setTimeout(r, 50));
  }
  const read = await request(`${a.adminUrl}/api/v1/default/config/list/route`, { token: fleet.token });
  assert.equal(read.status, 200, read.text);
  assert.deepEqual([...new Set(statuses)], [200], `fresh rate-limit buckets while the publish waits: ${statuses.join(' ')}`);
  await new Promise((r) => setTimeout(r, 3_000 - (performance.now() - t0)));
  await holder.query('COMMIT');
  const waited = await go;
  t.diagnostic(`the publish waited ${waited.toFixed(0)} ms for the lock`);
  assert.ok(waited >= 2_900, `it waited for the other publish (${waited} ms)`);
  assert.equal((await request(`${a.dataUrl}/later`)).text, 'later');
});
