import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, dryRun, setEntity } from './helpers/admin.js';
import { sendMany } from './helpers/load.js';
import { BOUNDED } from './helpers/wait.js';
import type { Json } from './helpers/json.js';

/** `total` GETs, every one answered 200. */
async function load(gw: Gateway, total: number, clients: number, headers?: (i: number) => Record<string, string>): Promise<void> {
  const statuses = await sendMany(gw.dataPort, total, clients, headers);
  assert.ok(statuses.every((s) => s === 200), `statuses: ${[...new Set(statuses)].join(', ')}`);
}

async function cluster(t: Parameters<typeof startGateway>[0], doc: Record<string, Json>): Promise<Gateway> {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [['cluster', 'c', doc], ['route', 'all', { cluster: 'c' }]]);
  return gw;
}

test('weights 1:3 share 4,000 requests 25 % / 75 % (± 3 %)', BOUNDED, async (t) => {
  const [a, b] = [await startUpstream(t), await startUpstream(t)];
  const gw = await cluster(t, { targets: [{ address: a.target, weight: 1 }, { address: b.target, weight: 3 }] });
  await load(gw, 4_000, 16);
  const share = a.requests.length / 4_000;
  t.diagnostic(`a ${a.requests.length}, b ${b.requests.length}`);
  assert.equal(a.requests.length + b.requests.length, 4_000);
  assert.ok(Math.abs(share - 0.25) <= 0.03, `a's share ${share}`);
});

test('least-request sends fewer requests to a target that answers 10x slower', BOUNDED, async (t) => {
  const [fast, slow] = [await startUpstream(t), await startUpstream(t)];
  const delay = (up: Upstream, ms: number) => {
    up.handler = (_req, res) => {
      setTimeout(() => res.end('ok'), ms);
      return true;
    };
  };
  delay(fast, 2);
  delay(slow, 20);
  const gw = await cluster(t, { targets: [fast.target, slow.target], balance: 'least-request' });
  await load(gw, 1_500, 16);
  t.diagnostic(`fast ${fast.requests.length}, slow ${slow.requests.length}`);
  assert.ok(slow.requests.length * 2 < fast.requests.length, `slow got ${slow.requests.length} of 1,500`);
});

test('hash on a header keeps each key on one target, and adding a third target moves at most 1/3 + 5 % of the keys', BOUNDED, async (t) => {
  const ups = [await startUpstream(t), await startUpstream(t), await startUpstream(t)];
  const doc = (n: number) => ({ targets: ups.slice(0, n).map((u) => u.target), balance: 'hash', hashOn: { header: 'X-User' } });
  const gw = await cluster(t, doc(2));
  const KEYS = 1_200;
  const placement = async (): Promise<Map<string, Set<number>>> => {
    for (const u of ups) u.requests.length = 0;
    await load(gw, KEYS * 2, 8, (i) => ({ 'x-user': `user-${i % KEYS}` }));
    const where = new Map<string, Set<number>>();
    ups.forEach((u, n) => {
      for (const r of u.requests) {
        const key = String(r.headers['x-user']);
        if (!where.has(key)) where.set(key, new Set());
        where.get(key)!.add(n);
      }
    });
    return where;
  };
  const before = await placement();
  assert.equal(before.size, KEYS);
  for (const [key, targets] of before) assert.equal(targets.size, 1, `${key} went to ${[...targets].join(', ')}`);
  await apply(gw, [['cluster', 'c', doc(3)]]);
  const after = await placement();
  let moved = 0;
  for (const [key, targets] of after) {
    assert.equal(targets.size, 1, `${key} went to ${[...targets].join(', ')}`);
    const was = [...before.get(key)!][0];
    const now = [...targets][0];
    if (now !== was) {
      moved++;
      assert.equal(now, 2, 'a key moves only to the new target');
    }
  }
  t.diagnostic(`moved ${moved} of ${KEYS}`);
  assert.ok(moved / KEYS <= 1 / 3 + 0.05, `moved ${moved}`);
  assert.ok(moved > 0, 'the new target got keys');
});

test('balance "hash" needs hashOn, and hashOn needs balance "hash": a dry-run issue names it', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await setEntity(gw, 'cluster', 'c', { targets: [up.target], balance: 'hash' });
  await setEntity(gw, 'cluster', 'd', { targets: [up.target], hashOn: { path: true } });
  const r = await dryRun(gw);
  assert.equal(r.status, 422);
  const issues = r.json.issues.filter((i) => i.pointer === '/hashOn');
  assert.deepEqual(issues.map((i) => i.name).sort(), ['c', 'd']);
});
