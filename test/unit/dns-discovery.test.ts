import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Resolver } from 'node:dns/promises';
import { refreshSeconds, retrySeconds } from '../../src/supervisor/discovery/refresh-delay.js';
import { addressDiff, sameAddresses, sortedAddresses } from '../../src/supervisor/discovery/address-set.js';
import { expandCluster, srvWeight } from '../../src/shared/discovery-targets.js';
import { priorityDown } from '../../src/shared/balance/priority-tiers.js';
import { Discovery } from '../../src/supervisor/discovery/discovery.js';
import type { Answer } from '../../src/supervisor/discovery/dns-query.js';
import type { CompiledCluster, CompiledGeneration } from '../../src/contracts/generation.js';
import type { DiscoveredAddress, DiscoverySource } from '../../src/contracts/discovery.js';
import type { ToWorker } from '../../src/contracts/ipc.js';
import { UpstreamGuard } from '../../src/shared/upstream-guard.js';
import { parseDocument } from '../../src/compiler/documents.js';
import { waitFor } from '../helpers/wait.js';

test('refresh: refreshSeconds as written, else the shortest TTL, clamped to [1 s, 300 s]; a failure retries within 5 s', () => {
  assert.equal(refreshSeconds(10, [1]), 10);
  assert.equal(refreshSeconds(undefined, [60, 20, 30]), 20);
  assert.equal(refreshSeconds(undefined, [0]), 1);
  assert.equal(refreshSeconds(undefined, [86_400]), 300);
  assert.equal(refreshSeconds(undefined, []), 30);
  assert.equal(retrySeconds(undefined), 5);
  assert.equal(retrySeconds(2), 2);
  assert.equal(retrySeconds(60), 5);
});

test('set diffing: order does not count, weight and priority do', () => {
  const a: DiscoveredAddress[] = [{ hostPort: '10.0.0.1:80' }, { hostPort: '10.0.0.2:80' }];
  assert.ok(sameAddresses(a, [...a].reverse()));
  assert.ok(!sameAddresses(a, [{ hostPort: '10.0.0.1:80' }]));
  assert.ok(!sameAddresses([{ hostPort: 'x:1', weight: 1 }], [{ hostPort: 'x:1', weight: 2 }]));
  assert.deepEqual(addressDiff(a, [{ hostPort: '10.0.0.2:80' }, { hostPort: '10.0.0.3:80' }]), { added: ['10.0.0.3:80'], removed: ['10.0.0.1:80'] });
  assert.deepEqual(sortedAddresses([{ hostPort: 'b:1' }, { hostPort: 'a:1' }]).map((x) => x.hostPort), ['a:1', 'b:1']);
});

const base: CompiledCluster = { targets: [], connectMs: 1, headersMs: 1, bodyMs: 1, connections: { perTarget: 1, maxPending: 1, pendingTimeoutMs: 1 } };

test('expansion: fixed targets first, then each address; SRV weights (0 counts as 1) and priorities; https keeps the name for the certificate', () => {
  const spec: CompiledCluster = {
    ...base,
    targets: ['10.9.9.9:80'],
    discover: [
      { source: 's1', name: 'api.test', type: 'A', scheme: 'https', port: 8080, weight: 2 },
      { source: 's2', name: '_x._tcp.test', type: 'SRV', scheme: 'https' },
    ],
  };
  const sets: Record<string, DiscoveredAddress[]> = {
    s1: [{ hostPort: '10.0.0.1:8080' }, { hostPort: '10.0.0.2:8080' }],
    s2: [{ hostPort: '10.0.0.3:443', weight: 30, priority: 1 }, { hostPort: '10.0.0.4:443', weight: 0, priority: 2 }],
  };
  const out = expandCluster(spec, (id) => sets[id]);
  assert.deepEqual(out.targets, ['10.9.9.9:80', 'https://10.0.0.1:8080', 'https://10.0.0.2:8080', 'https://10.0.0.3:443', 'https://10.0.0.4:443']);
  assert.deepEqual(out.weights, [1, 2, 2, 30, 1]);
  assert.deepEqual(out.priorities, [0, 0, 0, 1, 2]);
  assert.equal(out.tls?.serverName, 'api.test');
  assert.equal(srvWeight(0), 1);
  // Nothing resolved yet: the fixed targets only; a cluster without {dns} targets is returned as is.
  assert.deepEqual(expandCluster(spec, () => undefined).targets, ['10.9.9.9:80']);
  const fixed = { ...base, targets: ['a:1'] };
  assert.equal(expandCluster(fixed, () => undefined), fixed);
});

test('priorities: only the lowest group with a target in rotation serves; all down: verdicts unchanged (panic)', () => {
  assert.deepEqual(priorityDown([false, false, false], [10, 10, 20]), [false, false, true]);
  assert.deepEqual(priorityDown([true, false, false], [10, 10, 20]), [true, false, true]);
  assert.deepEqual(priorityDown([true, true, false], [10, 10, 20]), [true, true, false]);
  assert.deepEqual(priorityDown([true, true, true], [10, 10, 20]), [true, true, true]);
  assert.deepEqual(priorityDown([false, true], undefined), [false, true]);
});

test('documents: {dns} targets are checked at their pointer', () => {
  const errors = (t: unknown) => {
    const r = parseDocument('cluster', { targets: [t] });
    return r.ok ? [] : r.errors.map((e) => `${e.path} ${e.message}`);
  };
  assert.deepEqual(errors({ dns: 'api.test', port: 80 }), []);
  assert.deepEqual(errors({ dns: '_http._tcp.api.test', type: 'SRV' }), []);
  assert.match(errors({ dns: 'api.test' })[0]!, /^\/targets\/0\/port an A or AAAA target needs port/);
  assert.match(errors({ dns: '_h._tcp.x', type: 'SRV', port: 80 })[0]!, /^\/targets\/0\/port SRV records give their own ports/);
  assert.match(errors({ dns: 'api.test', port: 0 })[0]!, /^\/targets\/0\/port port must be 1-65535/);
  assert.match(errors({ dns: 'api.test', port: 80, refreshSeconds: 301 })[0]!, /^\/targets\/0\/refreshSeconds/);
  assert.match(errors({ dns: 'bad_name..x', port: 80 })[0]!, /^\/targets\/0\/dns must be a DNS name/);
  assert.match(errors({ dns: '10.0.0.1', port: 80 })[0]!, /^\/targets\/0\/dns is an IP address/);
  assert.match(errors({ dns: 'a.test', port: 80, type: 'MX' })[0]!, /^\/targets\/0\/type/);
});

test('Discovery: resolves once per name, pushes a changed set, keeps the last set when the name fails (fail static, logged once), refuses denied addresses', async () => {
  const source: DiscoverySource = { id: 'default/c|A|api.test|80', tenant: 'default', cluster: 'c', name: 'api.test', type: 'A', port: 80, refreshSeconds: 1 };
  const gen = { format: 1, tenants: {}, hostOwners: {}, clusters: { 'default/c': { ...base, discover: [{ source: source.id, name: 'api.test', type: 'A', scheme: 'http', port: 80 }] } }, discoverySources: [source] } as CompiledGeneration;
  let answer: Answer | Error = { addresses: [{ ip: '10.0.0.1', port: 80 }, { ip: '169.254.169.254', port: 80 }], ttls: [1] };
  let queries = 0;
  const pushed: ToWorker[] = [];
  const expanded: string[][] = [];
  const lines: { level: string; msg: string }[] = [];
  const log = Object.fromEntries(['info', 'warn', 'error', 'debug'].map((level) => [level, (_o: unknown, msg: string) => lines.push({ level, msg })])) as never;
  const d = new Discovery({
    resolver: {} as Resolver,
    guard: UpstreamGuard.from({ allow: [], deny: ['169.254.169.254/32'], tenants: {}, admin: { host: '127.0.0.1', port: 1 }, data: { host: '127.0.0.1', port: 2 } }),
    pushAll: (m) => pushed.push(m),
    expanded: (g) => expanded.push(g?.clusters['default/c']?.targets ?? []),
    log,
    query: () => {
      queries++;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  });
  try {
    d.serve(gen);
    await waitFor('the first set', () => d.status('default/c')[0]?.state === 'ok');
    assert.equal(queries, 1);
    assert.deepEqual(d.status('default/c')[0]!.addresses, ['10.0.0.1:80']);
    assert.deepEqual(d.status('default/c')[0]!.refused, [{ rule: 'upstreams.deny 169.254.169.254/32', count: 1 }]);
    assert.deepEqual(pushed.at(-1), { type: 'discovery', sets: [{ id: source.id, version: 1, addresses: [{ hostPort: '10.0.0.1:80' }] }] });
    assert.deepEqual(expanded.at(-1), ['10.0.0.1:80']);
    d.serve(gen); // a publish naming the same source: no new query
    assert.equal(queries, 1);
    answer = Object.assign(new Error('queryA ECONNREFUSED api.test'), { code: 'ECONNREFUSED' });
    await waitFor('fail static', () => d.status('default/c')[0]?.state === 'fail-static', { timeoutMs: 3_000 });
    await waitFor('another failed try', () => queries >= 3, { timeoutMs: 3_000 });
    assert.deepEqual(d.status('default/c')[0]!.addresses, ['10.0.0.1:80'], 'the last good set');
    assert.equal(d.status('default/c')[0]!.lastResult, 'refused', 'a class, not the resolver\'s text');
    assert.equal(lines.filter((l) => l.msg.includes('fail static')).length, 1, 'one line per transition');
    const pushes = pushed.length;
    answer = { addresses: [{ ip: '10.0.0.1', port: 80 }, { ip: '10.0.0.2', port: 80 }], ttls: [1] };
    await waitFor('ok again with two', () => d.status('default/c')[0]?.addresses.length === 2, { timeoutMs: 3_000 });
    assert.equal(pushed.length, pushes + 1);
    assert.ok(lines.some((l) => l.msg.includes('resolves again')));
    // A generation without the name: nothing is withdrawn from the workers (each drops the set when it swaps), the name stops.
    const before = pushed.length;
    d.serve({ ...gen, clusters: {}, discoverySources: [] });
    assert.equal(pushed.length, before);
    assert.deepEqual(d.sets(), []);
  } finally {
    d.stop();
  }
});

test('compiler: {dns} targets become discover entries and the generation lists their sources; https needs one certificate name', async () => {
  const { compile } = await import('../../src/compiler/compile.js');
  const ok = compile({
    tenant: 'default',
    published: [],
    drafts: [
      { kind: 'cluster', name: 'c', doc: { targets: ['10.0.0.9:80', { dns: 'API.test', port: 8080, refreshSeconds: 5 }, { dns: '_h._tcp.test', type: 'SRV' }] } },
      { kind: 'route', name: 'r', doc: { cluster: 'c' } },
    ],
  });
  assert.equal(ok.ok, true, JSON.stringify(ok.issues));
  if (!ok.ok) return;
  const c = ok.generation.clusters['default/c']!;
  assert.deepEqual(c.targets, ['10.0.0.9:80']);
  assert.deepEqual(c.discover!.map((d) => [d.source, d.type, d.port, d.scheme]), [
    ['default/c|A|api.test|8080', 'A', 8080, 'http'],
    ['default/c|SRV|_h._tcp.test|', 'SRV', undefined, 'http'],
  ]);
  assert.deepEqual(ok.generation.discoverySources, [
    { id: 'default/c|A|api.test|8080', tenant: 'default', cluster: 'c', name: 'api.test', type: 'A', port: 8080, refreshSeconds: 5 },
    { id: 'default/c|SRV|_h._tcp.test|', tenant: 'default', cluster: 'c', name: '_h._tcp.test', type: 'SRV' },
  ]);
  const bad = compile({
    tenant: 'default',
    published: [],
    drafts: [{ kind: 'cluster', name: 'c', doc: { targets: [{ dns: 'a.test', port: 443, scheme: 'https' }, { dns: 'b.test', port: 443, scheme: 'https' }], protocol: 'h2c' } }],
  });
  assert.deepEqual(bad.issues.map((i) => [i.pointer, i.code]), [
    ['/targets/0/scheme', 'Compile.Cluster.Protocol'],
    ['/targets/1/scheme', 'Compile.Cluster.Protocol'],
    ['/tls/serverName', 'Compile.Cluster.Discovery'],
  ]);
});
