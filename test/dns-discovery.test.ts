import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request as undiciRequest } from 'undici';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED, sleep, waitFor } from './helpers/wait.js';
import { startDns } from './helpers/dns-server.js';
import { pacedClient } from './helpers/paced-client.js';

/**
 * Clusters whose targets are DNS names, resolved by the gateway through a DNS server in
 * this test (dns2 on 127.0.0.1): upstreams on 127.0.0.2-6 (Linux loopback), one gateway
 * for all subtests.
 */

interface Upstream {
  ip: string;
  port: number;
  requests: number;
  /** What it answers (health path included). */
  status: number;
}

async function upstreamAt(t: { after(fn: () => void): void }, ip: string, port: number): Promise<Upstream> {
  const me: Upstream = { ip, port, requests: 0, status: 200 };
  const server: Server = createServer((req, res) => {
    if (req.url !== '/health') me.requests++;
    res.statusCode = me.status;
    if (req.url === '/slow') setTimeout(() => res.end(`${ip}:${me.port}`), 1_500);
    else res.end(`${ip}:${me.port}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ip, () => resolve());
  });
  me.port = (server.address() as AddressInfo).port;
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return me;
}

/** Upstreams on 127.0.0.2.. all on one port (A records give addresses; the target gives the port). */
async function upstreams(t: { after(fn: () => void): void }, count: number): Promise<Upstream[]> {
  const first = await upstreamAt(t, '127.0.0.2', 0);
  const rest = [];
  for (let i = 3; i < 2 + count; i++) rest.push(await upstreamAt(t, `127.0.0.${i}`, first.port));
  return [first, ...rest];
}

interface HealthBody {
  targets: { target: string; state: string; ejectedUntil: string | null; discovered?: boolean; weight?: number; priority?: number }[];
  dns?: { name: string; state: string; lastResult: string | null; lastResolvedAt: string | null; addresses: string[]; refused: { rule: string; count: number }[] }[];
}

const health = async (gw: Gateway, cluster: string): Promise<HealthBody> => (await request(`${gw.adminUrl}/api/v1/default/clusters/${cluster}/health`, { token: gw.tokens.root })).json as HealthBody;

const sameSet = (a: Set<string>, b: readonly string[]) => a.size === b.length && b.every((x) => a.has(x));

test('DNS targets: sets that change reach traffic within refreshSeconds + 1 s with no failed request; SRV weights and priority; per-address health; fail static; refused addresses', BOUNDED, async (t) => {
  const ups = await upstreams(t, 5);
  const dns = await startDns(t);
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    workers: 2,
    edit: (c) => {
      c.discovery = { resolvers: [dns.address] };
      c.upstreams = { deny: ['169.254.169.254/32'] };
    },
  });
  const P = ups[0]!.port;
  const at = (...n: number[]) => n.map((i) => `127.0.0.${i}:${P}`);
  const setA = (name: string, ...n: number[]) => dns.zone.a.set(name, n.map((i) => `127.0.0.${i}`));

  await t.test('a name that does not resolve yet: 503 Svc.Data.NoTargets, cluster health says pending', async () => {
    await apply(gw, [['cluster', 'nowhere', { targets: [{ dns: 'nowhere.test', port: P, refreshSeconds: 1 }] }], ['route', 'nowhere', { hosts: ['nowhere.test'], cluster: 'nowhere' }]]);
    const r = await request(`${gw.dataUrl}/x`, { headers: { host: 'nowhere.test' } });
    assert.equal(r.status, 503);
    assert.equal((r.json as { code: string }).code, 'Svc.Data.NoTargets');
    const h = await waitFor('a failed resolution shown', async () => {
      const b = await health(gw, 'nowhere');
      return b.dns?.[0]?.lastResult ? b : undefined;
    });
    assert.equal(h.dns![0]!.state, 'pending');
    assert.equal(h.dns![0]!.lastResult, 'not-found');
  });

  await t.test('2, then 4, then 3 A records: traffic spreads over exactly the current set within refreshSeconds + 1 s, no request fails', async () => {
    setA('api.test', 2, 3);
    await apply(gw, [['cluster', 'api', { targets: [{ dns: 'api.test', port: P, refreshSeconds: 1 }] }], ['route', 'api', { hosts: ['api.test'], cluster: 'api' }]]);
    await waitFor('the first set in cluster health', async () => (await health(gw, 'api')).dns?.[0]?.state === 'ok');
    const client = pacedClient(gw.dataPort, 'api.test', 40);
    try {
      for (const set of [[2, 3], [2, 3, 4, 5], [3, 4, 6]]) {
        setA('api.test', ...set);
        const changed = Date.now();
        // Within refreshSeconds + 1 s the answers come from exactly this set; checked over a second's window.
        await sleep(2_000);
        const window = Date.now();
        await sleep(1_000);
        const got = client.since(window);
        // How long the change took to reach traffic: the last answer from outside the new set.
        const stale = client.seen.filter((x) => x.at >= changed && !at(...set).includes(x.body)).map((x) => x.at - changed);
        const firsts = at(...set).map((a) => client.seen.find((x) => x.at >= changed && x.body === a)?.at ?? Infinity).map((x) => x - changed);
        t.diagnostic(`set ${set.join(',')}: ${[...got].sort().join(' ')}; every address answered by ${Math.max(...firsts)} ms, the last answer from outside it at ${stale.length ? Math.max(...stale) : 0} ms after the change`);
        assert.ok(stale.every((ms) => ms <= 2_000), 'the new set serves within refreshSeconds + 1 s');
        // An added address is in rotation by then too; its first answer follows within one turn of the client over the set (at 40/s, 100 ms).
        assert.ok(Math.max(...firsts) <= 2_250, `every address of the new set answered within refreshSeconds + 1 s: ${firsts.join(', ')} ms`);
        assert.ok(sameSet(got, at(...set)), `answers from ${[...got].join(', ')}, expected ${at(...set).join(', ')}`);
      }
    } finally {
      await client.stop();
    }
    t.diagnostic(`${client.seen.length} requests, ${client.failures} failed`);
    assert.equal(client.failures, 0);
    assert.ok(client.seen.length >= 250);
    const h = await health(gw, 'api');
    assert.deepEqual(h.targets.map((x) => x.target).sort(), at(3, 4, 6));
    assert.ok(h.targets.every((x) => x.discovered === true));
    const metrics = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root })).text;
    assert.match(metrics, /\nswitchyard_discovery_resolutions_total\{tenant="default",cluster="api",name="api\.test",type="A",result="ok"\} \d+\n/);
  });

  await t.test('a request in flight to an address the name no longer gives finishes; new requests go to the new set', async () => {
    setA('drain.test', 2);
    await apply(gw, [['cluster', 'drain', { targets: [{ dns: 'drain.test', port: P, refreshSeconds: 1 }] }], ['route', 'drain', { hosts: ['drain.test'], cluster: 'drain' }]]);
    await waitFor('the first set', async () => (await health(gw, 'drain')).targets.length === 1);
    const slow = request(`${gw.dataUrl}/slow`, { headers: { host: 'drain.test' } });
    await sleep(100);
    setA('drain.test', 3);
    await waitFor('the new set', async () => (await health(gw, 'drain')).targets[0]?.target === at(3)[0], { timeoutMs: 3_000 });
    await sleep(200); // the push reaches the workers
    const now = await request(`${gw.dataUrl}/x`, { headers: { host: 'drain.test' } });
    assert.equal(now.text, at(3)[0]);
    const r = await slow;
    assert.equal(r.status, 200);
    assert.equal(r.text, at(2)[0]);
  });

  await t.test('SRV records: 3:1 weights spread by weight, the priority-20 record gets nothing while priority 10 serves', async () => {
    setA('a.srv.test', 2);
    setA('b.srv.test', 3);
    setA('c.srv.test', 4);
    dns.zone.srv.set('_http._tcp.svc.test', [
      { priority: 10, weight: 3, port: P, target: 'a.srv.test' },
      { priority: 10, weight: 1, port: P, target: 'b.srv.test' },
      { priority: 20, weight: 1, port: P, target: 'c.srv.test' },
    ]);
    await apply(gw, [['cluster', 'srv', { targets: [{ dns: '_http._tcp.svc.test', type: 'SRV', refreshSeconds: 1 }] }], ['route', 'srv', { hosts: ['srv.test'], cluster: 'srv' }]]);
    await waitFor('the SRV set', async () => (await health(gw, 'srv')).targets.length === 3);
    const before = ups.map((u) => u.requests);
    const agent = new Agent({ connections: 4 });
    try {
      for (let i = 0; i < 400; i++) {
        const r = await undiciRequest(`http://127.0.0.1:${gw.dataPort}/x`, { dispatcher: agent, headers: { host: 'srv.test' } });
        await r.body.text();
        assert.equal(r.statusCode, 200);
      }
    } finally {
      await agent.close();
    }
    const got = ups.map((u, i) => u.requests - before[i]!);
    t.diagnostic(`127.0.0.2 (w3): ${got[0]}, 127.0.0.3 (w1): ${got[1]}, 127.0.0.4 (priority 20): ${got[2]}`);
    assert.equal(got[2], 0, 'the priority-20 target gets nothing');
    assert.ok(Math.abs(got[0]! / (got[0]! + got[1]!) - 0.75) < 0.05, 'weights 3:1');
    const h = await health(gw, 'srv');
    assert.deepEqual(h.targets.map((x) => [x.target, x.weight, x.priority]).sort(), [[at(2)[0], 3, 10], [at(3)[0], 1, 10], [at(4)[0], 1, 20]]);
  });

  await t.test('SRV priority: once every priority-10 address is unhealthy, the priority-20 one serves', async () => {
    await apply(gw, [['cluster', 'srv', { targets: [{ dns: '_http._tcp.svc.test', type: 'SRV', refreshSeconds: 1 }], healthCheck: { path: '/health', intervalMs: 200, unhealthyThreshold: 1, healthyThreshold: 1 } }]]);
    ups[0]!.status = 500;
    ups[1]!.status = 500;
    try {
      await waitFor('both priority-10 addresses unhealthy', async () => (await health(gw, 'srv')).targets.filter((x) => x.state === 'unhealthy').length === 2);
      await sleep(100); // the table reaches the workers
      const client = pacedClient(gw.dataPort, 'srv.test', 50);
      await sleep(600);
      await client.stop();
      assert.equal(client.failures, 0);
      assert.ok(sameSet(client.since(0), at(4)), `answers from ${[...client.since(0)].join(', ')}`);
    } finally {
      ups[0]!.status = 200;
      ups[1]!.status = 200;
    }
  });

  await t.test('one address answering 503: outlier ejection takes it alone out of rotation, the others serve', async () => {
    setA('ej.test', 2, 3, 5);
    await apply(gw, [
      ['cluster', 'ej', { targets: [{ dns: 'ej.test', port: P, refreshSeconds: 1 }], outlier: { consecutiveFailures: 3, ejectMs: 10_000, maxEjectedPercent: 50 } }],
      ['route', 'ej', { hosts: ['ej.test'], cluster: 'ej' }],
    ]);
    await waitFor('the set in cluster health', async () => (await health(gw, 'ej')).targets.length === 3);
    ups[3]!.status = 503; // 127.0.0.5
    try {
      const warm = pacedClient(gw.dataPort, 'ej.test', 50);
      const h = await waitFor('127.0.0.5 ejected', async () => {
        const b = await health(gw, 'ej');
        return b.targets.find((x) => x.target === at(5)[0])?.ejectedUntil ? b : undefined;
      });
      await warm.stop();
      assert.deepEqual(h.targets.filter((x) => !x.ejectedUntil).map((x) => x.target).sort(), at(2, 3), 'only the failing address is ejected');
      await sleep(100); // the table reaches the workers
      const before = ups[3]!.requests;
      const client = pacedClient(gw.dataPort, 'ej.test', 50);
      await sleep(1_000);
      await client.stop();
      assert.equal(client.failures, 0);
      assert.equal(ups[3]!.requests - before, 0, 'no request reached the ejected address');
      assert.ok(sameSet(client.since(0), at(2, 3)));
    } finally {
      ups[3]!.status = 200;
    }
  });

  await t.test('one address failing its health checks: only it is unhealthy, the others serve', async () => {
    setA('hc.test', 2, 3, 5);
    await apply(gw, [
      ['cluster', 'hc', { targets: [{ dns: 'hc.test', port: P, refreshSeconds: 1 }], healthCheck: { path: '/health', intervalMs: 200, unhealthyThreshold: 2, healthyThreshold: 1 } }],
      ['route', 'hc', { hosts: ['hc.test'], cluster: 'hc' }],
    ]);
    await waitFor('three healthy', async () => (await health(gw, 'hc')).targets.filter((x) => x.state === 'healthy').length === 3, { timeoutMs: 5_000 });
    ups[3]!.status = 500; // 127.0.0.5
    try {
      const h = await waitFor('127.0.0.5 unhealthy', async () => {
        const b = await health(gw, 'hc');
        return b.targets.find((x) => x.target === at(5)[0])?.state === 'unhealthy' ? b : undefined;
      });
      assert.deepEqual(h.targets.filter((x) => x.state === 'healthy').map((x) => x.target).sort(), at(2, 3));
      await sleep(100); // the table reaches the workers
      const before = ups[3]!.requests;
      const client = pacedClient(gw.dataPort, 'hc.test', 50);
      await sleep(1_000);
      await client.stop();
      assert.equal(client.failures, 0);
      assert.equal(ups[3]!.requests - before, 0, 'no request reached the unhealthy address');
      assert.ok(sameSet(client.since(0), at(2, 3)));
    } finally {
      ups[3]!.status = 200;
    }
  });

  await t.test('an address the upstream policy denies is refused and logged, the rest used', async () => {
    dns.zone.a.set('mixed.test', ['127.0.0.2', '169.254.169.254']);
    await apply(gw, [['cluster', 'mixed', { targets: [{ dns: 'mixed.test', port: P, refreshSeconds: 1 }] }], ['route', 'mixed', { hosts: ['mixed.test'], cluster: 'mixed' }]]);
    const h = await waitFor('the set', async () => {
      const b = await health(gw, 'mixed');
      return b.dns?.[0]?.state === 'ok' ? b : undefined;
    });
    assert.deepEqual(h.targets.map((x) => x.target), at(2));
    assert.deepEqual(h.dns![0]!.refused, [{ rule: 'upstreams.deny 169.254.169.254/32', count: 1 }]);
    const line = await waitFor('the refusal logged', () =>
      gw.logLines().find((l) => (l as { msg?: string }).msg?.startsWith('DNS discovery: a resolved address is refused') && (l as { cluster?: string }).cluster === 'mixed'),
    );
    assert.deepEqual([(line as { tenant: string }).tenant, (line as { name: string }).name, (line as { address: string }).address], ['default', 'mixed.test', `169.254.169.254:${P}`]);
    for (let i = 0; i < 10; i++) {
      const r = await request(`${gw.dataUrl}/x`, { headers: { host: 'mixed.test' } });
      assert.equal(r.status, 200);
      assert.equal(r.text, at(2)[0]);
    }
  });

  await t.test('the DNS server stopped: the last set keeps serving, cluster health says fail-static; back when it answers again', async () => {
    setA('api.test', 3, 4);
    await waitFor('the api set of two', async () => (await health(gw, 'api')).targets.length === 2, { timeoutMs: 4_000 });
    await dns.stop();
    const h = await waitFor('fail-static', async () => {
      const b = await health(gw, 'api');
      return b.dns?.[0]?.state === 'fail-static' ? b : undefined;
    }, { timeoutMs: 10_000 });
    assert.deepEqual(h.dns![0]!.addresses.sort(), at(3, 4));
    const client = pacedClient(gw.dataPort, 'api.test', 40);
    await sleep(1_500);
    await client.stop();
    assert.equal(client.failures, 0);
    assert.ok(sameSet(client.since(0), at(3, 4)));
    assert.equal(gw.logLines().filter((l) => (l as { msg?: string }).msg?.startsWith('DNS discovery: the name does not resolve; the last addresses keep serving') && (l as { cluster?: string }).cluster === 'api').length, 1, 'logged once');
    await dns.start();
    await waitFor('ok again', async () => (await health(gw, 'api')).dns?.[0]?.state === 'ok', { timeoutMs: 10_000 });
  });
});
