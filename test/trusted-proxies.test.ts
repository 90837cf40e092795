import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { startUpstream, type UpstreamRequest } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { requestFrom } from './helpers/http-from.js';
import { rawRequest } from './helpers/raw-http.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

// Linux routes all of 127/8 to lo: the trusted proxy connects from 127.0.0.2, an untrusted
// client from 127.0.0.3 (and the tests' usual 127.0.0.1).
const PROXY = '127.0.0.2';
const CLIENT = '127.0.0.3';

/** Every identity header a client may send, repeated and in mixed case (raw lines, as written). */
const SPOOF = [
  'X-Forwarded-For: 6.6.6.6',
  'x-forwarded-for: 7.7.7.7, 198.51.100.1',
  'X-FORWARDED-FOR: 8.8.8.8',
  'Forwarded: for=6.6.6.6;proto=https',
  'forwarded: for="[2001:db8::6]"',
  'X-Real-IP: 6.6.6.6',
  'x-real-ip: 7.7.7.7',
  'X-Forwarded-Port: 443',
  'x-FORWARDED-port: 8443',
  'X-Forwarded-Proto: https',
  'X-Forwarded-Host: evil.example',
  'True-Client-IP: 6.6.6.6',
  'TRUE-CLIENT-IP: 7.7.7.7',
  'X-Client-IP: 6.6.6.6',
  'x-Client-Ip: 7.7.7.7',
];
const FIVE = ['forwarded', 'x-real-ip', 'true-client-ip', 'x-client-ip'];

/** The values of one header as the upstream got them, one per line. */
const linesOf = (rec: UpstreamRequest, name: string) => rec.rawHeaders.flatMap((v, i) => (i % 2 === 0 && v.toLowerCase() === name ? [rec.rawHeaders[i + 1]!] : []));

test('client identity headers and trusted proxies (worker.json trustedProxies)', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const auth = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: (c) => (c.trustedProxies = [`${PROXY}/32`]) });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'plain', { cluster: 'up', pathPrefix: '/plain' }],
    [
      'route',
      'steps',
      {
        cluster: 'up',
        pathPrefix: '/steps',
        steps: [{ code: 'forward-auth', settings: { url: `${auth.url}/verify`, requestHeaders: ['x-forwarded-for', 'x-forwarded-port', 'x-forwarded-proto', 'x-forwarded-host', ...FIVE] } }],
      },
    ],
    ['route', 'allow', { cluster: 'up', pathPrefix: '/allow', steps: [{ code: 'ip-restriction', settings: { allow: ['198.51.100.0/24'] } }] }],
    ['route', 'deny', { cluster: 'up', pathPrefix: '/deny', steps: [{ code: 'ip-restriction', settings: { deny: ['203.0.113.0/24', CLIENT] } }] }],
    ['route', 'rl', { cluster: 'up', pathPrefix: '/rl', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 0.01, burst: 1, key: 'ip', headers: false } }] }],
    ['route', 'log', { cluster: 'up', pathPrefix: '/log', steps: [{ code: 'access-log', settings: {} }] }],
  ]);
  const port = String(gw.dataPort);
  const raw = async (from: string, path: string, lines: string[]) => {
    const r = await rawRequest(gw.dataPort, [`GET ${path} HTTP/1.1`, 'Host: shop.example', 'Connection: close', ...lines], '', 5_000, from);
    assert.equal(r.status, 200, r.raw);
    return up.requests.find((q) => q.url === path)!;
  };

  await t.test('from an untrusted peer the upstream gets X-Forwarded-For: <peer> alone and none of the identity headers', async () => {
    for (const [from, route] of [[CLIENT, 'plain'], ['127.0.0.1', 'plain'], [CLIENT, 'steps']] as const) {
      const path = `/${route}/untrusted-${from}`;
      const rec = await raw(from, path, SPOOF);
      assert.deepEqual(linesOf(rec, 'x-forwarded-for'), [from], `${path}: the client's chain is replaced, not extended`);
      for (const name of FIVE) assert.deepEqual(linesOf(rec, name), [], `${path}: ${name}`);
      assert.deepEqual(linesOf(rec, 'x-forwarded-port'), [port], `${path}: the data port`);
      assert.deepEqual(linesOf(rec, 'x-forwarded-proto'), ['http']);
      assert.deepEqual(linesOf(rec, 'x-forwarded-host'), ['shop.example']);
    }
    // Steps and their sub-requests never saw them either: forward-auth copies them when present.
    const call = auth.requests.find((q) => q.headers['x-forwarded-uri'] === `/steps/untrusted-${CLIENT}`)!;
    assert.ok(call, 'the auth service was asked');
    assert.equal(call.headers['x-forwarded-for'], CLIENT);
    assert.equal(call.headers['x-forwarded-port'], port);
    for (const name of FIVE) assert.equal(call.headers[name], undefined, `the auth service got no ${name}`);
  });

  await t.test('from a trusted proxy the chain is kept with the peer appended, and its identity headers pass', async () => {
    for (const route of ['plain', 'steps']) {
      const path = `/${route}/trusted`;
      const rec = await raw(PROXY, path, SPOOF);
      assert.deepEqual(linesOf(rec, 'x-forwarded-for'), [`6.6.6.6, 7.7.7.7, 198.51.100.1, 8.8.8.8, ${PROXY}`], path);
      assert.deepEqual(linesOf(rec, 'x-real-ip'), ['6.6.6.6', '7.7.7.7']);
      assert.deepEqual(linesOf(rec, 'forwarded'), ['for=6.6.6.6;proto=https', 'for="[2001:db8::6]"']);
      assert.deepEqual(linesOf(rec, 'true-client-ip'), ['6.6.6.6', '7.7.7.7']);
      assert.deepEqual(linesOf(rec, 'x-client-ip'), ['6.6.6.6', '7.7.7.7']);
      assert.deepEqual(linesOf(rec, 'x-forwarded-port'), [port], 'X-Forwarded-Port is the gateway’s own, even from a proxy');
      assert.deepEqual(linesOf(rec, 'x-forwarded-proto'), ['http']);
    }
  });

  await t.test('ip-restriction decides on the client a trusted proxy reports; a spoofed chain gets nowhere', async () => {
    const status = async (from: string, path: string, xff?: string) =>
      (await requestFrom(from, `${gw.dataUrl}${path}`, { headers: xff === undefined ? {} : { 'x-forwarded-for': xff } })).status;
    assert.equal(await status(PROXY, '/allow', '198.51.100.9'), 200);
    assert.equal(await status(PROXY, '/allow', '203.0.113.1'), 403);
    assert.equal(await status(PROXY, '/allow', '198.51.100.9, 203.0.113.1'), 403, 'the right-most untrusted hop is the client');
    assert.equal(await status(PROXY, '/allow', '203.0.113.1, 198.51.100.9'), 200);
    assert.equal(await status(PROXY, '/allow', `198.51.100.9, ${PROXY}`), 200, 'trusted hops are skipped');
    assert.equal(await status(PROXY, '/allow'), 403, 'no chain: the proxy itself is the client');
    assert.equal(await status(CLIENT, '/allow', '198.51.100.9'), 403, 'an untrusted peer cannot name an allowed client');
    assert.equal(await status(CLIENT, '/allow', `198.51.100.9, ${PROXY}`), 403, 'nor pose as the trusted proxy');
    assert.equal(await status(PROXY, '/deny', '203.0.113.5'), 403);
    assert.equal(await status(PROXY, '/deny', '198.51.100.1'), 200);
    assert.equal(await status(PROXY, '/deny', CLIENT), 403, 'a denied client behind the proxy');
    assert.equal(await status(CLIENT, '/deny', '198.51.100.1'), 403, 'a denied peer stays denied whatever it says');
    const viaRealIp = await requestFrom(CLIENT, `${gw.dataUrl}/deny`, { headers: { 'x-real-ip': '198.51.100.1', forwarded: 'for=198.51.100.1' } });
    assert.equal(viaRealIp.status, 403, 'X-Real-IP and Forwarded are never read');
  });

  await t.test('rate-limit key ip: one bucket per client behind a trusted proxy, one per peer otherwise', async () => {
    const status = async (from: string, xff: string) => (await requestFrom(from, `${gw.dataUrl}/rl`, { headers: { 'x-forwarded-for': xff } })).status;
    assert.equal(await status(PROXY, '198.51.100.1'), 200);
    assert.equal(await status(PROXY, '198.51.100.1'), 429, 'the same client again');
    assert.equal(await status(PROXY, '198.51.100.2'), 200, 'another client behind the same proxy');
    assert.equal(await status(PROXY, '::ffff:198.51.100.2'), 429, 'the same client in v4-mapped form');
    assert.equal(await status(CLIENT, '198.51.100.3'), 200);
    assert.equal(await status(CLIENT, '198.51.100.4'), 429, 'an untrusted peer is its own bucket, whatever it claims');
  });

  await t.test('access-log names the client and the peer', async () => {
    assert.equal((await requestFrom(PROXY, `${gw.dataUrl}/log/a`, { headers: { 'x-forwarded-for': '6.6.6.6, 198.51.100.7' } })).status, 200);
    assert.equal((await requestFrom(CLIENT, `${gw.dataUrl}/log/b`, { headers: { 'x-forwarded-for': '198.51.100.8' } })).status, 200);
    const line = (path: string) => waitFor(`the access line of ${path}`, () => gw.logLines().find((l) => l.access && l.path === path));
    const a = await line('/log/a');
    assert.equal(a.client, '198.51.100.7');
    assert.equal(a.peer, PROXY);
    const b = await line('/log/b');
    assert.equal(b.client, CLIENT);
    assert.equal(b.peer, CLIENT);
  });
});

test('a dual-stack data port sees IPv4 peers as IPv4-mapped IPv6; they match IPv4 trustedProxies', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    edit: (c) => {
      c.listen.host = '::';
      c.trustedProxies = [`${PROXY}/32`];
    },
  });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'allow', { cluster: 'up', steps: [{ code: 'ip-restriction', settings: { allow: ['198.51.100.0/24'] } }] }],
  ]);
  const url = `http://127.0.0.1:${gw.dataPort}/x`;
  const r = await requestFrom(PROXY, url, { headers: { 'x-forwarded-for': '198.51.100.9' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.headers['x-forwarded-for'], `198.51.100.9, ${PROXY}`, 'the peer appended as dotted IPv4');
  assert.equal((await requestFrom(CLIENT, url, { headers: { 'x-forwarded-for': '198.51.100.9' } })).status, 403);
});
