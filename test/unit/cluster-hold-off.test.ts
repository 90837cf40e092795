import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { ClusterPools, HOLD_OFF_MS } from '../../src/worker/upstream-pools.js';
import type { Upstream } from '../../src/contracts/upstream.js';
import { freePort } from '../helpers/ports.js';
import { UpstreamGuard } from '../../src/shared/upstream-guard.js';
import { TargetHealth } from '../../src/worker/target-health.js';
import { h2Upstream } from '../helpers/h2-server.js';

/** These pools connect to loopback on purpose: the policy is deliberately open. */
const shared = { upstreamGuard: UpstreamGuard.allowAll(), targetHealth: new TargetHealth(), reportOutlier: () => {}, discovery: { version: 0, get: () => undefined } };

/** A cluster [closed port, live upstream]; `live` and `dead` are its two pools. */
async function cluster(t: { after(fn: () => unknown): void }) {
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  const dead = await freePort();
  const spec = {
    targets: [`127.0.0.1:${dead}`, `127.0.0.1:${(server.address() as AddressInfo).port}`],
    connectMs: 1_000,
    headersMs: 5_000,
    bodyMs: 5_000,
    connections: { perTarget: 8, maxPending: 8, pendingTimeoutMs: 1_000 },
  };
  const pools = new ClusterPools(spec, 'default/c', shared);
  t.after(() => pools.close());
  const first = pools.pick();
  const second = pools.pick();
  return { pools, dead: first, live: second };
}

/** One GET through `up`: its error code, or 'ok'. */
function get(up: Upstream): Promise<string> {
  return new Promise((resolve) => {
    up.dispatch({ path: '/', method: 'GET' }, {
      onConnect() {},
      onHeaders: () => true,
      onData: () => true,
      onComplete: () => resolve('ok'),
      onError: (err: Error) => resolve((err as Error & { code?: string }).code ?? err.message),
    } as Dispatcher.DispatchHandler);
  });
}

test('round robin passes over a target that refused a connection, for the hold-off, then picks it again', async (t) => {
  const { pools, dead, live } = await cluster(t);
  assert.equal(pools.size, 2);
  assert.notEqual(dead, live);
  assert.equal(await get(dead), 'ECONNREFUSED');
  for (let i = 0; i < 6; i++) assert.equal(pools.pick(), live, `pick ${i} during the hold-off`);
  assert.equal(pools.pickOther(live), dead, 'the only other target, even held off');
  assert.equal(pools.pickOther(dead), live);
  await new Promise((r) => setTimeout(r, HOLD_OFF_MS + 50));
  const picks = [pools.pick(), pools.pick()];
  assert.ok(picks.includes(dead) && picks.includes(live), 'after the hold-off both are picked again');
});

test('every target held off: plain round robin', async (t) => {
  const { pools } = await cluster(t);
  const both = new ClusterPools({ ...pools.spec, targets: [pools.spec.targets[0]!, `127.0.0.1:${await freePort()}`] }, 'default/c', shared);
  t.after(() => both.close());
  const [a, b] = [both.pick(), both.pick()];
  assert.deepEqual(await Promise.all([get(a), get(b)]), ['ECONNREFUSED', 'ECONNREFUSED']);
  assert.deepEqual([both.pick(), both.pick(), both.pick(), both.pick()], [a, b, a, b]);
});

test('an h2c cluster: a target that refused its session is held off the same way, and the live one answers over HTTP/2', async (t) => {
  const up = await h2Upstream(t, (stream, headers) => {
    stream.respond({ ':status': 200 });
    stream.end(`h2 ${headers[':path']}`);
  });
  const dead = `127.0.0.1:${await freePort()}`;
  const spec = { targets: [dead, up.target], protocol: 'h2c' as const, connectMs: 1_000, headersMs: 5_000, bodyMs: 5_000, connections: { perTarget: 2, maxPending: 8, pendingTimeoutMs: 1_000 } };
  const pools = new ClusterPools(spec, 'default/g', shared);
  t.after(() => pools.close());
  const [first, second] = [pools.pick(), pools.pick()];
  assert.equal(await get(first), 'ECONNREFUSED');
  for (let i = 0; i < 4; i++) assert.equal(pools.pick(), second, `pick ${i} during the hold-off`);
  assert.equal(await get(second), 'ok');
  assert.equal(up.sessions.length, 1, 'the request went over HTTP/2');
  assert.deepEqual(pools.inFlight(), { [dead]: 0, [up.target]: 0 });
});

test('SRV priorities without health checks: a priority-10 target that refuses connections is held off and priority 20 serves, until the hold ends', async (t) => {
  const { pools } = await cluster(t);
  const [dead, live] = pools.spec.targets;
  const spec = { ...pools.spec, targets: [dead!, live!], priorities: [10, 20] };
  const tiers = new ClusterPools(spec, 'default/p', shared);
  t.after(() => tiers.close());
  const first = tiers.pick();
  assert.equal(tiers.addressOf(first), dead, 'priority 10 first');
  for (let i = 0; i < 3; i++) assert.equal(tiers.pick(), first, 'only priority 10 while it is not held off');
  assert.equal(await get(first), 'ECONNREFUSED');
  for (let i = 0; i < 4; i++) assert.equal(tiers.addressOf(tiers.pick()), live, `pick ${i}: priority 20 during the hold-off`);
  await new Promise((r) => setTimeout(r, HOLD_OFF_MS + 50));
  assert.equal(tiers.addressOf(tiers.pick()), dead, 'priority 10 again once the hold ends');
});

test('a DNS change keeps the hold-off of an address that stays', async (t) => {
  const { pools } = await cluster(t);
  const [dead, live] = pools.spec.targets;
  const sets: Record<string, { hostPort: string }[]> = { s: [{ hostPort: dead! }, { hostPort: live! }] };
  const discovery = { version: 1, get: (id: string) => sets[id] };
  const dns = new ClusterPools({ ...pools.spec, targets: [], discover: [{ source: 's', name: 'x.test', type: 'A', scheme: 'http', port: 1 }] }, 'default/d', { ...shared, discovery });
  t.after(() => dns.close());
  const deadPool = dns.pick();
  assert.equal(dns.addressOf(deadPool), dead);
  assert.equal(await get(deadPool), 'ECONNREFUSED');
  // A third address joins: the held-off one stays held off (and keeps its pool), the others serve.
  sets.s = [{ hostPort: '127.0.0.1:1' }, { hostPort: dead! }, { hostPort: live! }];
  discovery.version++;
  shared.targetHealth.touch();
  const picked = new Set<string>();
  for (let i = 0; i < 6; i++) picked.add(dns.addressOf(dns.pick()));
  assert.ok(!picked.has(dead!), `the held-off address was picked: ${[...picked].join(', ')}`);
  assert.ok(dns.spec.targets.includes(dead!));
});
