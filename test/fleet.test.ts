import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFleet } from './helpers/fleet.js';
import { publish, setEntity, history } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { issueKey, revokeKeyRaw } from './helpers/keys.js';
import { BOUNDED } from './helpers/wait.js';
import type { Gateway } from './helpers/gateway.js';

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
