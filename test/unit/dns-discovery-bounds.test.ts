import { test } from 'node:test';
import assert from 'node:assert/strict';
import { queryDns, SRV_HOST_CONCURRENCY, type Answer, type DnsClient } from '../../src/supervisor/discovery/dns-query.js';
import { ipOrderKey, orderSrv, selectAddresses } from '../../src/supervisor/discovery/address-order.js';
import { resultClass } from '../../src/supervisor/discovery/result-class.js';
import { Discovery } from '../../src/supervisor/discovery/discovery.js';
import { holdOffDown } from '../../src/shared/balance/priority-tiers.js';
import { carried, carriedIndex, removedIndexes } from '../../src/worker/pool-retarget.js';
import { WeightedRoundRobin } from '../../src/shared/balance/weighted-round-robin.js';
import { WorkerDiscovery } from '../../src/worker/worker-discovery.js';
import { TargetHealth } from '../../src/worker/target-health.js';
import { UpstreamGuard } from '../../src/shared/upstream-guard.js';
import type { CompiledCluster, CompiledGeneration } from '../../src/contracts/generation.js';
import type { DiscoverySource } from '../../src/contracts/discovery.js';
import type { ToWorker } from '../../src/contracts/ipc.js';
import { waitFor } from '../helpers/wait.js';

/** The bounds of DNS discovery: answers ordered, filtered then capped; SRV fan-out; shared queries; compile limits. */

const rotate = <T>(xs: T[], k: number): T[] => [...xs.slice(k), ...xs.slice(0, k)];
const noRefusal = () => null;

/** A resolver whose answers the test writes; counts A queries and the most in flight at once. */
function fakeResolver(a: Record<string, string[]>, srv: Record<string, { name: string; port: number; weight: number; priority: number }[]> = {}, delayMs = 1) {
  const stats = { a: 0, inFlight: 0, maxInFlight: 0 };
  const later = async <T>(v: () => T): Promise<T> => {
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    await new Promise((r) => setTimeout(r, delayMs));
    stats.inFlight--;
    return v();
  };
  const notFound = (name: string) => Object.assign(new Error(`queryA ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
  const client = {
    resolve4: (name: string) => {
      stats.a++;
      return later(() => {
        if (!a[name]) throw notFound(name);
        return a[name]!.map((address) => ({ address, ttl: 5 }));
      });
    },
    resolve6: (name: string) => later(() => Promise.reject(notFound(name))),
    resolveSrv: (name: string) => later(() => srv[name] ?? Promise.reject(notFound(name))),
  } as unknown as DnsClient;
  return { client, stats };
}

test('A answers of more than 64 records: the same 64 (lowest addresses) whatever the rotation; refused addresses take no slot', async () => {
  const ips = Array.from({ length: 100 }, (_, i) => `10.0.${Math.floor(i / 10)}.${(i * 7) % 250}`);
  const sets = new Set<string>();
  for (const k of [0, 13, 50, 99]) {
    const { client } = fakeResolver({ 'big.test': rotate(ips, k) });
    const answer = await queryDns(client, { name: 'big.test', type: 'A' }, () => true);
    const { allowed } = selectAddresses(answer.addresses, 80, noRefusal);
    assert.equal(allowed.length, 64);
    sets.add(JSON.stringify(allowed.map((x) => x.hostPort).sort()));
  }
  assert.equal(sets.size, 1, 'one set for every rotation');
  const lowest = [...ips].sort((x, y) => (ipOrderKey(x) < ipOrderKey(y) ? -1 : 1)).slice(0, 64).map((ip) => `${ip}:80`);
  assert.deepEqual([...sets][0], JSON.stringify(lowest.sort()));
  // 10 refused addresses first in order: still 64 allowed, the refused counted apart.
  const refusedIps = new Set(lowest.slice(0, 10).map((x) => x.slice(0, -3)));
  const answer = await queryDns(fakeResolver({ 'big.test': ips }).client, { name: 'big.test', type: 'A' }, () => true);
  const sel = selectAddresses(answer.addresses, 80, (ip) => (refusedIps.has(ip) ? 'upstreams.deny 10.0.0.0/8' : null));
  assert.equal(sel.allowed.length, 64);
  assert.equal(sel.refused.length, 10);
  assert.ok(sel.allowed.every((x) => !refusedIps.has(x.hostPort.slice(0, -3))));
  assert.ok(ipOrderKey('10.0.0.9') < ipOrderKey('10.0.0.10') && ipOrderKey('9.255.255.255') < ipOrderKey('10.0.0.0') && ipOrderKey('255.0.0.1') < ipOrderKey('::1'));
  assert.ok(ipOrderKey('2001:db8::2') < ipOrderKey('2001:db8::10') && ipOrderKey('2001:db8::ffff') < ipOrderKey('2001:db9::'));
});

test('SRV: 70 records at priority 20 listed before 10 at priority 10 keep all 10 of priority 10; order priority, weight desc, name', async () => {
  const records = [
    ...Array.from({ length: 70 }, (_, i) => ({ name: `p20-${String(i).padStart(2, '0')}.test`, port: 80, weight: 1, priority: 20 })),
    ...Array.from({ length: 10 }, (_, i) => ({ name: `p10-${i}.test`, port: 80, weight: i, priority: 10 })),
  ];
  const a: Record<string, string[]> = {};
  records.forEach((r, i) => (a[r.name] = [`10.1.${Math.floor(i / 200)}.${i % 200}`]));
  const { client, stats } = fakeResolver(a, { '_h._tcp.test': records });
  const answer = await queryDns(client, { name: '_h._tcp.test', type: 'SRV' }, () => true);
  const { allowed } = selectAddresses(answer.addresses, undefined, noRefusal);
  assert.equal(allowed.length, 64);
  assert.equal(allowed.filter((x) => x.priority === 10).length, 10, 'every priority-10 address kept');
  assert.ok(stats.a <= 64 + SRV_HOST_CONCURRENCY, `${stats.a} host queries for a cap of 64`);
  assert.deepEqual(orderSrv([{ name: 'b', port: 1, weight: 5, priority: 10 }, { name: 'a', port: 1, weight: 5, priority: 10 }, { name: 'c', port: 1, weight: 9, priority: 10 }, { name: 'd', port: 1, weight: 99, priority: 5 }]).map((r) => r.name), ['d', 'c', 'a', 'b']);
});

test('SRV fan-out: 500 hosts resolve only as many as the cap needs, at most 8 at a time; refused hosts do not count toward the cap', async () => {
  const records = Array.from({ length: 500 }, (_, i) => ({ name: `h${String(i).padStart(3, '0')}.test`, port: 8080, weight: 1, priority: 10 }));
  const a: Record<string, string[]> = {};
  records.forEach((r, i) => (a[r.name] = [`10.2.${Math.floor(i / 250)}.${i % 250}`]));
  const { client, stats } = fakeResolver(a, { '_h._tcp.test': records }, 3);
  const refuse = (ip: string) => ip.endsWith('.0') || ip.endsWith('5');
  const answer = await queryDns(client, { name: '_h._tcp.test', type: 'SRV' }, (ip) => !refuse(ip));
  const sel = selectAddresses(answer.addresses, undefined, (ip) => (refuse(ip) ? 'rule' : null));
  assert.equal(sel.allowed.length, 64);
  assert.ok(stats.a < 100, `${stats.a} A queries for 500 hosts`);
  assert.ok(stats.maxInFlight <= SRV_HOST_CONCURRENCY, `${stats.maxInFlight} at once`);
});

test('a server that never answers: the query fails ETIMEOUT by its deadline', async () => {
  const hang = { resolve4: () => new Promise(() => {}), resolve6: () => new Promise(() => {}), resolveSrv: () => new Promise(() => {}) } as unknown as DnsClient;
  const started = Date.now();
  await assert.rejects(queryDns(hang, { name: 'x.test', type: 'A' }, () => true, 200), (err: NodeJS.ErrnoException) => err.code === 'ETIMEOUT');
  assert.ok(Date.now() - started < 1_000);
  assert.deepEqual(['ENOTFOUND', 'ENODATA', 'ETIMEOUT', 'ECONNREFUSED', 'ESERVFAIL', 'queryA weird text'].map(resultClass), ['not-found', 'not-found', 'timeout', 'refused', 'error', 'error']);
});

const base: CompiledCluster = { targets: [], connectMs: 1, headersMs: 1, bodyMs: 1, connections: { perTarget: 1, maxPending: 1, pendingTimeoutMs: 1 } };
const source = (cluster: string, port: number, refreshSeconds?: number): DiscoverySource => ({ id: `default/${cluster}|A|api.test|${port}`, tenant: 'default', cluster, name: 'api.test', type: 'A', port, ...(refreshSeconds ? { refreshSeconds } : {}) });
const generation = (sources: DiscoverySource[]): CompiledGeneration =>
  ({
    format: 1,
    tenants: {},
    hostOwners: {},
    clusters: Object.fromEntries(sources.map((s) => [`default/${s.cluster}`, { ...base, discover: [{ source: s.id, name: s.name, type: 'A', scheme: 'http', port: s.port }] }])),
    discoverySources: sources,
  }) as CompiledGeneration;

function discovery() {
  let queries = 0;
  const pushed: ToWorker[] = [];
  const log = Object.fromEntries(['info', 'warn', 'error', 'debug'].map((level) => [level, () => {}])) as never;
  const d = new Discovery({
    resolver: {} as DnsClient,
    guard: UpstreamGuard.from({ allow: [], deny: [], tenants: {}, admin: { host: '127.0.0.1', port: 1 }, data: { host: '127.0.0.1', port: 2 } }),
    pushAll: (m) => pushed.push(m),
    expanded: () => {},
    log,
    query: (): Promise<Answer> => {
      queries++;
      return Promise.resolve({ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ttls: [300] });
    },
  });
  return { d, pushed, queries: () => queries };
}

test('Discovery: one query for a name several clusters and ports of a tenant write; a new port or a renamed cluster serves the last good answer at once', async () => {
  const { d, pushed, queries } = discovery();
  try {
    d.serve(generation([source('a', 80), source('b', 81)]));
    await waitFor('both sets', () => d.status('default/a')[0]?.state === 'ok' && d.status('default/b')[0]?.addresses.length === 2);
    assert.equal(queries(), 1, 'one query for two targets');
    assert.deepEqual(d.status('default/b')[0]!.addresses, ['10.0.0.1:81', '10.0.0.2:81']);
    // The port changes and cluster a is renamed c: both have their addresses before any new query, pushed before the generation goes out.
    const before = pushed.length;
    d.serve(generation([source('c', 80), source('b', 82)]));
    assert.equal(queries(), 1);
    assert.deepEqual(d.status('default/c')[0]!.addresses, ['10.0.0.1:80', '10.0.0.2:80']);
    assert.equal(d.status('default/c')[0]!.state, 'ok');
    assert.deepEqual(d.status('default/b')[0]!.addresses, ['10.0.0.1:82', '10.0.0.2:82']);
    assert.equal(pushed.length, before + 1);
    assert.deepEqual((pushed.at(-1) as { sets: { id: string }[] }).sets.map((s) => s.id).sort(), ['default/b|A|api.test|82', 'default/c|A|api.test|80']);
    // Moved to fixed targets and back (a rollback): the name kept its answer, the target serves at once.
    d.serve(generation([]));
    assert.deepEqual(d.sets(), []);
    d.serve(generation([source('c', 80)]));
    assert.deepEqual(d.status('default/c')[0]!.addresses, ['10.0.0.1:80', '10.0.0.2:80']);
    assert.equal(queries(), 1, 'not asked again before its refresh');
  } finally {
    d.stop();
  }
});

test('Discovery: a publish that shortens refreshSeconds (300 to 1) reschedules the name at once', async () => {
  const { d, queries } = discovery();
  try {
    d.serve(generation([source('a', 80, 300)]));
    await waitFor('the first answer', () => queries() === 1 && d.status('default/a')[0]?.state === 'ok');
    const next = Date.parse(d.status('default/a')[0]!.nextAt!);
    assert.ok(next - Date.now() > 200_000);
    d.serve(generation([source('a', 80, 1)]));
    assert.ok(Date.parse(d.status('default/a')[0]!.nextAt!) - Date.now() <= 1_000);
    await waitFor('asked again within a second', () => queries() >= 2, { timeoutMs: 2_500 });
  } finally {
    d.stop();
  }
});

test('workers: a set stays until the worker swaps to a generation without its source', () => {
  const w = new WorkerDiscovery(new TargetHealth());
  w.update([{ id: 's1', version: 1, addresses: [{ hostPort: '10.0.0.1:80' }] }, { id: 's2', version: 2, addresses: [] }]);
  const v = w.version;
  w.served({ discoverySources: [{ id: 's2' }] } as unknown as CompiledGeneration);
  assert.equal(w.get('s1'), undefined);
  assert.deepEqual(w.get('s2'), []);
  assert.equal(w.version, v + 1);
});

test('pools: a DNS change carries the state of addresses that stay; held-off targets hand over to the next priority group', () => {
  const from = carriedIndex(['a', 'b', 'c'], ['c', 'd', 'a']);
  assert.deepEqual(from, [2, -1, 0]);
  assert.deepEqual(removedIndexes(3, from), [1]);
  assert.deepEqual(carried([5, 6, 7], from, 0), [7, 0, 5]);
  const before = new WeightedRoundRobin([1, 3, 1]);
  for (let i = 0; i < 3; i++) before.choose(null, () => true);
  const after = new WeightedRoundRobin([1, 1, 1]);
  after.carry(before, from);
  const scores = (x: WeightedRoundRobin) => (x as unknown as { score: number[] }).score;
  assert.deepEqual(scores(after), [scores(before)[2], 0, scores(before)[0]]);
  // Priorities 10, 10, 20: both priority-10 targets held off for a second, the 20 one serves; the groups are worked out again when the first hold ends.
  const now = 1_000_000;
  const down = [false, false, false];
  assert.equal(holdOffDown(down, [now + 500, now + 900, 0], now), now + 500);
  assert.deepEqual(down, [true, true, false]);
  const expired = [false, false, false];
  assert.equal(holdOffDown(expired, [now - 1, 0, 0], now), 0);
  assert.deepEqual(expired, [false, false, false]);
});

test('compiler: at most 16 DNS targets per cluster and 64 per tenant, the issue at the first target past the limit', async () => {
  const { compile } = await import('../../src/compiler/compile.js');
  const dnsTargets = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ dns: `n${from + i}.test`, port: 1000 + i, refreshSeconds: 1 }));
  const one = compile({ tenant: 'default', published: [], drafts: [{ kind: 'cluster', name: 'c', doc: { targets: ['10.0.0.1:80', ...dnsTargets(17)] } }] });
  assert.deepEqual(one.issues.filter((i) => i.code === 'Compile.Cluster.Discovery').map((i) => [i.name, i.pointer]), [['c', '/targets/17']]);
  const ok = compile({ tenant: 'default', published: [], drafts: [{ kind: 'cluster', name: 'c', doc: { targets: dnsTargets(16) } }] });
  assert.deepEqual(ok.issues.filter((i) => i.code === 'Compile.Cluster.Discovery'), []);
  const drafts = Array.from({ length: 5 }, (_, k) => ({ kind: 'cluster', name: `c${k}`, doc: { targets: dnsTargets(16, k * 16) } }));
  const many = compile({ tenant: 'default', published: [], drafts });
  assert.deepEqual(many.issues.filter((i) => i.code === 'Compile.Cluster.Discovery').map((i) => [i.name, i.pointer]), [['c4', '/targets/0']]);
});

test('metrics: a cluster writing one name with two ports has one series per family, its addresses summed', async () => {
  const { Exposition } = await import('../../src/shared/metrics-exposition.js');
  const { d } = discovery();
  try {
    const gen = generation([source('a', 80)]);
    const second = { ...source('a', 81) };
    gen.discoverySources!.push(second);
    gen.clusters['default/a']!.discover!.push({ source: second.id, name: 'api.test', type: 'A', scheme: 'http', port: 81 });
    d.serve(gen);
    await waitFor('both ports', () => d.status('default/a').every((s) => s.addresses.length === 2) && d.status('default/a').length === 2);
    const out = new Exposition();
    d.write(out);
    const lines = out.text().split('\n').filter((l) => l.startsWith('switchyard_discovery_addresses{'));
    assert.deepEqual(lines, ['switchyard_discovery_addresses{tenant="default",cluster="a",name="api.test",type="A"} 4']);
  } finally {
    d.stop();
  }
});
