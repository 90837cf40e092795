import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { NO_THROTTLE, issueKey } from './helpers/keys.js';
import { BOUNDED, sleep, waitFor } from './helpers/wait.js';
import { startDns } from './helpers/dns-server.js';
import { pacedClient } from './helpers/paced-client.js';

/**
 * DNS discovery at its edges, one gateway for all subtests: what another tenant sees of a
 * name resolving to the gateway itself, a DNS server that stops answering (fail static by a
 * bounded time), and publishes moving a cluster between DNS and fixed targets under steady
 * traffic (no request fails).
 */

interface DnsStatus {
  name: string;
  state: string;
  lastResult: string | null;
  addresses: string[];
  refused: { rule: string; count: number }[];
}

async function upstreamAt(t: { after(fn: () => void): void }, ip: string, port: number): Promise<{ port: number }> {
  const server: Server = createServer((_req, res) => res.end(ip));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ip, () => resolve());
  });
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port };
}

const healthOf = async (gw: Gateway, tenant: string, cluster: string, token: string) => request(`${gw.adminUrl}/api/v1/${tenant}/clusters/${cluster}/health`, { token });

test('DNS targets at their edges: another tenant sees no refused address, a server that hangs means fail static, publishes between DNS and fixed targets fail no request', BOUNDED, async (t) => {
  const dns = await startDns(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 2, edit: (c) => ((c.discovery = { resolvers: [dns.address] }), NO_THROTTLE(c)) });
  const a = await upstreamAt(t, '127.0.0.2', 0);
  await upstreamAt(t, '127.0.0.3', a.port);
  const P = a.port;

  await t.test("another tenant's name resolving to the gateway's admin port or loopback: refused, logged with the address, shown to the tenant as a count and rule only", async () => {
    dns.zone.a.set('admin.acme.test', ['127.0.0.1']);
    dns.zone.a.set('loop.acme.test', ['127.0.0.2', '127.0.0.3']);
    const sub = await issueKey(gw, gw.tokens.root!, 'acme', { name: 'ops', scopes: ['cluster:read'] });
    await apply(
      gw,
      [
        ['cluster', 'inside', { targets: [{ dns: 'admin.acme.test', port: gw.adminPort, refreshSeconds: 1 }, { dns: 'loop.acme.test', port: P, refreshSeconds: 1 }, { dns: 'gone.acme.test', port: P, refreshSeconds: 1 }] }],
        ['route', 'inside', { hosts: ['inside.acme.test'], cluster: 'inside' }],
      ],
      'acme',
    );
    const body = await waitFor('every name resolved once', async () => {
      const r = await healthOf(gw, 'acme', 'inside', sub.token);
      const dnsRows = (r.json as { dns?: DnsStatus[] }).dns ?? [];
      return dnsRows.length === 3 && dnsRows.every((d) => d.lastResult !== null) ? r : undefined;
    });
    const rows = Object.fromEntries(((body.json as { dns: DnsStatus[] }).dns).map((d) => [d.name, d]));
    assert.equal(rows['admin.acme.test']!.refused.length, 1);
    assert.equal(rows['admin.acme.test']!.refused[0]!.count, 1);
    assert.deepEqual(rows['loop.acme.test']!.refused.reduce((n, r) => n + r.count, 0), 2);
    assert.deepEqual([rows['admin.acme.test']!.addresses, rows['loop.acme.test']!.addresses], [[], []]);
    assert.equal(rows['gone.acme.test']!.lastResult, 'not-found');
    assert.doesNotMatch(body.text, /127\.0\.0\.[123]/, 'no resolved address in what the tenant reads');
    assert.doesNotMatch(body.text, /ENOTFOUND|queryA/, "no resolver's text");
    const logged = await waitFor('the refusals in the node log', () => {
      const lines = gw.logLines().filter((l) => (l as { msg?: string }).msg?.startsWith('DNS discovery: a resolved address is refused') && (l as { tenant?: string }).tenant === 'acme');
      return lines.length >= 3 ? lines : undefined;
    });
    assert.ok(logged.some((l) => (l as { address?: string }).address === `127.0.0.1:${gw.adminPort}`));
    const r = await request(`${gw.dataUrl}/x`, { headers: { host: 'inside.acme.test' } });
    assert.equal(r.status, 503);
    assert.equal((r.json as { code: string }).code, 'Svc.Data.NoTargets');
  });

  await t.test('the DNS server stops answering (queries unanswered): fail static within the bounded time, the last set serves, no request fails; ok again once it answers', async () => {
    dns.zone.a.set('hang.test', ['127.0.0.2']);
    await apply(gw, [['cluster', 'hang', { targets: [{ dns: 'hang.test', port: P, refreshSeconds: 1 }] }], ['route', 'hang', { hosts: ['hang.test'], cluster: 'hang' }]]);
    await waitFor('ok', async () => ((await healthOf(gw, 'default', 'hang', gw.tokens.root!)).json as { dns: DnsStatus[] }).dns[0]?.state === 'ok');
    const client = pacedClient(gw.dataPort, 'hang.test', 30);
    dns.hang = true;
    const hungAt = Date.now();
    try {
      const h = await waitFor('fail-static', async () => {
        const d = ((await healthOf(gw, 'default', 'hang', gw.tokens.root!)).json as { dns: DnsStatus[] }).dns[0]!;
        return d.state === 'fail-static' ? d : undefined;
      }, { timeoutMs: 15_000 });
      const took = Date.now() - hungAt;
      t.diagnostic(`fail static ${took} ms after the server stopped answering`);
      assert.ok(took <= 1_000 + 8_000 + 1_500, `${took} ms: refresh (1 s) + the query's deadline (8 s)`);
      assert.equal(h.lastResult, 'timeout');
      assert.deepEqual(h.addresses, [`127.0.0.2:${P}`]);
    } finally {
      dns.hang = false;
    }
    await waitFor('ok again', async () => ((await healthOf(gw, 'default', 'hang', gw.tokens.root!)).json as { dns: DnsStatus[] }).dns[0]?.state === 'ok', { timeoutMs: 12_000 });
    await client.stop();
    t.diagnostic(`${client.seen.length} requests, ${client.failed.length} failed`);
    assert.deepEqual(client.failed, []);
  });

  await t.test("per-address metric series: a publish keeps counting the DNS addresses; an address removed without a publish loses its series", async () => {
    dns.zone.a.set('series.test', ['127.0.0.2']);
    await apply(gw, [['cluster', 'series', { targets: [{ dns: 'series.test', port: P, refreshSeconds: 1 }] }], ['route', 'series', { hosts: ['series.test'], cluster: 'series' }]]);
    await waitFor('the set', async () => ((await healthOf(gw, 'default', 'series', gw.tokens.root!)).json as { dns: DnsStatus[] }).dns[0]?.addresses.length === 1);
    await sleep(200); // the set reaches both workers
    const count = async (ip: string): Promise<number | null> => {
      const text = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root })).text;
      const series = `switchyard_upstream_duration_seconds_count{tenant="default",cluster="series",target="${ip}:${P}"} `;
      const line = text.split('\n').find((l) => l.startsWith(series));
      return line === undefined ? null : Number(line.slice(series.length));
    };
    const send = async (n: number) => {
      for (let i = 0; i < n; i++) assert.equal((await request(`${gw.dataUrl}/x`, { headers: { host: 'series.test' } })).status, 200);
    };
    await send(20);
    await waitFor('20 counted', async () => ((await count('127.0.0.2')) ?? 0) >= 20);
    await apply(gw, [['route', 'series-other', { hosts: ['other.series.test'], cluster: 'series' }]]);
    await send(20);
    await waitFor('40 counted: the meters survive the swap', async () => ((await count('127.0.0.2')) ?? 0) >= 40, { timeoutMs: 4_000 });
    dns.zone.a.set('series.test', ['127.0.0.3']);
    await waitFor('the new set', async () => ((await healthOf(gw, 'default', 'series', gw.tokens.root!)).json as { dns: DnsStatus[] }).dns[0]?.addresses[0] === `127.0.0.3:${P}`, { timeoutMs: 4_000 });
    await sleep(200);
    await send(10);
    await waitFor('the removed address has no series, the new one has', async () => (await count('127.0.0.2')) === null && ((await count('127.0.0.3')) ?? 0) >= 10, { timeoutMs: 4_000 });
  });

  await t.test('publishes moving a cluster from a DNS name to a fixed target and back, under steady traffic: no request fails', async () => {
    dns.zone.a.set('win.test', ['127.0.0.2']);
    const viaDns = { targets: [{ dns: 'win.test', port: P, refreshSeconds: 1 }] };
    const fixed = { targets: [`127.0.0.3:${P}`] };
    await apply(gw, [['cluster', 'win', viaDns], ['route', 'win', { hosts: ['win.test'], cluster: 'win' }]]);
    await waitFor('ok', async () => ((await healthOf(gw, 'default', 'win', gw.tokens.root!)).json as { dns: DnsStatus[] }).dns[0]?.addresses.length === 1);
    await sleep(200); // the set reaches both workers
    const client = pacedClient(gw.dataPort, 'win.test', 100);
    try {
      for (let i = 0; i < 4; i++) {
        await apply(gw, [['cluster', 'win', fixed]]);
        await sleep(150);
        await apply(gw, [['cluster', 'win', viaDns]]);
        await sleep(150);
      }
    } finally {
      await client.stop();
    }
    t.diagnostic(`${client.seen.length} requests over 8 publishes, ${client.failed.length} failed${client.failed.length ? `: ${client.failed.slice(0, 3).join('; ')}` : ''}`);
    assert.ok(client.seen.length >= 100);
    assert.deepEqual(client.failed, []);
  });
});
