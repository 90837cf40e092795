import { test, type TestContext } from 'node:test';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { WebSocket, WebSocketServer } from 'ws';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { rawRequest } from './helpers/raw-http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus, waitForWorkersAt } from './helpers/admin.js';
import { BOUNDED, sleep } from './helpers/wait.js';
import { freePort } from './helpers/ports.js';
import type { Json } from './helpers/json.js';

/** The value of switchyard_requests_total summed over the series whose labels include `labels`. */
async function requestsTotal(gw: Gateway, labels: Record<string, string>): Promise<number> {
  const r = await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root });
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return r.text
    .split('\n')
    .filter((l) => l.startsWith('switchyard_requests_total{') && want.every((w) => l.includes(w)))
    .reduce((s, l) => s + Number(l.split(' ').at(-1)), 0);
}

/** Rides out one shipment (workers ship their counts each second). */
const shipped = () => sleep(1_400);


/** A gateway (root key) writing its access log to access.log in its folder. */
async function gatewayWithAccessLog(t: TestContext): Promise<{ gw: Gateway; file: string }> {
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    edit: (c) => {
      c.log = { ...(c.log as Record<string, Json>), access: { enabled: true, path: 'access.log' } };
    },
  });
  return { gw, file: join(gw.dir, 'access.log') };
}

/** The JSON lines of an access log file. */
function accessLines(file: string): Record<string, Json>[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, Json>);
}

test('a rate-limit 429 envelope carries the request id the client got as its traceId', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'limited', { pathPrefix: '/l', cluster: 'api', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 0.001, burst: 1 } }] }],
  ]);
  assert.equal((await request(`${gw.dataUrl}/l/1`)).status, 200);
  const refused = await request(`${gw.dataUrl}/l/2`);
  assert.equal(refused.status, 429);
  assert.ok(refused.headers['x-request-id'], 'the answer carries an id');
  assert.equal(refused.json.traceId, refused.headers['x-request-id'], 'the envelope names the id the client got');
});

test('a directResponse too large for one cork is counted under its route', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['route', 'small', { pathPrefix: '/small', directResponse: { statusCode: 200, body: 'hi' } }],
    ['route', 'big', { pathPrefix: '/big', directResponse: { statusCode: 200, body: 'x'.repeat(60_000) } }],
  ]);
  for (let i = 0; i < 3; i++) assert.equal((await request(`${gw.dataUrl}/small`)).status, 200);
  for (let i = 0; i < 4; i++) assert.equal((await request(`${gw.dataUrl}/big`)).text.length, 60_000);
  await shipped();
  assert.equal(await requestsTotal(gw, { route: 'small' }), 3);
  assert.equal(await requestsTotal(gw, { route: 'big' }), 4, 'the large answers are the route\'s');
  assert.equal(await requestsTotal(gw, { route: '' }), 0, 'none is counted as a request no route took');
});

test('the upstream gets exactly one request id header, the one the client got, whatever a route\'s header edits add', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'added', { pathPrefix: '/added', cluster: 'api', steps: [{ code: 'request-headers', settings: { add: { 'x-request-id': 'from-step' } } }] }],
    ['route', 'set', { pathPrefix: '/set', cluster: 'api', steps: [{ code: 'request-headers', settings: { set: { 'X-Request-Id': 'from-step' } } }] }],
  ]);
  for (const path of ['/added/1', '/set/1']) {
    const r = await request(`${gw.dataUrl}${path}`, { headers: { 'x-request-id': 'client' } });
    assert.equal(r.status, 200);
    const raw = r.json.rawHeaders as string[];
    const ids = raw.filter((_, i) => i % 2 === 1 && raw[i - 1]!.toLowerCase() === 'x-request-id');
    assert.deepEqual(ids, [r.headers['x-request-id']], `${path}: one header upstream, the client's id`);
  }
});

/** Writes `bytes` on a fresh connection and resolves with what came back once `until` holds or the peer closed. */
function exchangeBytes(port: number, bytes: string, until: (got: string) => boolean, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port });
    let got = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no complete answer: ${got.slice(0, 300)}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve(got);
    };
    sock.on('data', (d) => {
      got += d.toString('latin1');
      if (until(got)) done();
    });
    sock.on('close', done);
    sock.on('error', () => undefined);
    sock.write(bytes);
  });
}

test('every request counted once and logged once: aborts (499), HEAD, pipelined, odd methods, refusals, retries', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const dead = await freePort();
  const { gw, file } = await gatewayWithAccessLog(t);
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['cluster', 'two', { targets: [`127.0.0.1:${dead}`, up.target], retry: { attempts: 2, on: ['connect-failure'] } }],
    ['route', 'a', { pathPrefix: '/a', cluster: 'api' }],
    ['route', 'r', { pathPrefix: '/r', cluster: 'two' }],
    ['route', 'f', { pathPrefix: '/f', directResponse: { statusCode: 200, body: 'fixed' } }],
  ]);
  const port = Number(new URL(gw.dataUrl).port);
  let sent = 0;
  // A client that leaves while the upstream is still thinking.
  const leaving = connect({ host: '127.0.0.1', port });
  leaving.write('GET /a/slow HTTP/1.1\r\nhost: x\r\nx-up-delay-ms: 1500\r\n\r\n');
  await sleep(300);
  leaving.destroy();
  sent++;
  assert.equal((await request(`${gw.dataUrl}/a/h`, { method: 'HEAD' })).status, 200);
  sent++;
  assert.equal((await request(`${gw.dataUrl}/f`, { method: 'HEAD' })).status, 200);
  sent++;
  // Fixed answers, then one for the upstream last (uWS refuses a request pipelined behind an upstream's).
  const three = await exchangeBytes(port, 'GET /f HTTP/1.1\r\nhost: x\r\n\r\nHEAD /nowhere HTTP/1.1\r\nhost: x\r\n\r\nGET /a/p HTTP/1.1\r\nhost: x\r\n\r\n', (g) => (g.match(/HTTP\/1\.1 \d{3}/g) ?? []).length >= 3 && g.endsWith('}'));
  assert.equal((three.match(/HTTP\/1\.1 \d{3}/g) ?? []).length, 3, JSON.stringify(three));
  sent += 3;
  const odd = await exchangeBytes(port, 'FROBNICATE /a/x HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n', (g) => /\r\n\r\n/.test(g));
  assert.match(odd, /^HTTP\/1\.1 \d{3}/);
  sent++;
  assert.equal((await request(`${gw.dataUrl}/r/x`)).status, 200, 'the retry reached the live target');
  sent++;
  const badHost = await exchangeBytes(port, 'GET /a/x HTTP/1.1\r\nhost: a b\r\n\r\n', (g) => /\r\n\r\n/.test(g));
  assert.match(badHost, /^HTTP\/1\.1 400/);
  sent++;

  await sleep(1_800); // the abandoned upstream answer, then a shipment
  const m = await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root });
  const total = m.text
    .split('\n')
    .filter((l) => l.startsWith('switchyard_requests_total{'))
    .reduce((s, l) => s + Number(l.split(' ').at(-1)), 0);
  const counts = m.text
    .split('\n')
    .filter((l) => l.startsWith('switchyard_request_duration_seconds_count{'))
    .reduce((s, l) => s + Number(l.split(' ').at(-1)), 0);
  assert.equal(total, sent, `every request counted once:\n${m.text.split('\n').filter((l) => l.startsWith('switchyard_requests_total')).join('\n')}`);
  assert.equal(counts, sent, 'histogram counts equal request counts');
  assert.ok(m.text.includes('status_class="4xx"'), 'the client that left is a 4xx (499)');
  const lines = accessLines(file);
  assert.equal(lines.length, sent, `one access line per request:\n${lines.map((l) => `${l.method} ${l.path} ${l.status}`).join('\n')}`);
  assert.ok(lines.some((l) => l.status === 499 && l.path === '/a/slow'), 'the client that left is logged 499');
});

test('an access line names no upstream when none answered (the client got the gateway\'s 502), as the reference says', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const dead = `127.0.0.1:${await freePort()}`;
  const { gw, file } = await gatewayWithAccessLog(t);
  await apply(gw, [
    ['cluster', 'gone', { targets: [dead] }],
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'g', { pathPrefix: '/g', cluster: 'gone' }],
    ['route', 'a', { pathPrefix: '/a', cluster: 'api' }],
  ]);
  assert.equal((await request(`${gw.dataUrl}/g/1`)).status, 502);
  assert.equal((await request(`${gw.dataUrl}/a/1`)).status, 200);
  await sleep(500);
  const lines = accessLines(file);
  assert.deepEqual(
    lines.map((l) => [l.route, l.status, l.upstream, l.upstreamMs === null]),
    [
      ['g', 502, null, true],
      ['a', 200, up.target, false],
    ],
  );
});

test('a worker killed with SIGKILL: /metrics and status still answer, shipped counts stay, none is counted twice', BOUNDED, async (t) => {
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY] });
  const pub = await apply(gw, [['route', 'f', { pathPrefix: '/f', directResponse: { statusCode: 200, body: 'ok' } }]]);
  let sent = 0;
  for (let i = 0; i < 40; i++, sent++) assert.equal((await request(`${gw.dataUrl}/f`)).status, 200);
  await shipped();
  const before = await clusterStatus(gw);
  process.kill(before.workers[0]!.pid!, 'SIGKILL');
  const m = await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root, timeoutMs: 5_000 });
  assert.equal(m.status, 200);
  assert.equal(await requestsTotal(gw, { route: 'f' }), sent, 'what was shipped stays');
  const s = await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token: gw.tokens.root, timeoutMs: 5_000 });
  assert.equal(s.status, 200);
  await waitForWorkersAt(gw, pub.generation, 20_000);
  for (let i = 0; i < 40; i++, sent++) assert.equal((await request(`${gw.dataUrl}/f`)).status, 200);
  await shipped();
  assert.equal(await requestsTotal(gw, { route: 'f' }), sent, 'the respawned worker adds its own, nothing twice');
});

test('SIGHUP while the workers drain: a draining worker reopens too, its last lines go to the new file', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const { gw, file } = await gatewayWithAccessLog(t);
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'a', { pathPrefix: '/a', cluster: 'api' }],
  ]);
  assert.equal((await request(`${gw.dataUrl}/a/before`)).status, 200);
  const slow = request(`${gw.dataUrl}/a/slow`, { headers: { 'x-up-delay-ms': '2500' } });
  await sleep(300);
  const stopping = gw.stop('SIGTERM', 20_000);
  await sleep(500); // the worker drains, the slow request still in flight
  renameSync(file, `${file}.1`);
  process.kill(gw.pid, 'SIGHUP');
  assert.equal((await slow).status, 200);
  const stop = await stopping;
  assert.deepEqual([stop.code, stop.signal], [0, null]);
  const paths = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { path: string }).path) : []);
  assert.deepEqual(paths(`${file}.1`), ['/a/before'], 'the renamed file has the lines before the HUP');
  assert.deepEqual(paths(file), ['/a/slow'], 'the drained request\'s line is in the new file');
});

test('a directResponse that names the request id\'s header among its headers still answers one id, the request\'s', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [['route', 'f', { pathPrefix: '/f', directResponse: { statusCode: 200, body: 'hi', headers: { 'X-Request-Id': 'static', 'x-other': '1' } } }]]);
  const r = await rawRequest(gw.dataPort, ['GET /f HTTP/1.1', 'Host: a.test', 'Connection: close']);
  assert.equal(r.status, 200);
  const ids = r.headerList.filter(([k]) => k === 'x-request-id').map(([, v]) => v);
  assert.equal(ids.length, 1, `one id header: ${JSON.stringify(ids)}`);
  assert.match(ids[0]!, /^w0-/, 'the request\'s id');
  assert.equal(r.headers['x-other'], '1', 'the other headers stay');
  const head = await request(`${gw.dataUrl}/f`, { method: 'HEAD' });
  assert.match(String(head.headers['x-request-id']), /^w0-[^,]+$/, 'HEAD: one id, the request\'s (repeats would be joined with a comma)');
});

test('a proxied WebSocket is counted once (1xx) with its target in the access line and the upstream histogram; a refused handshake counts the target\'s error', BOUNDED, async (t) => {
  const http = createServer((_req, res) => res.end('plain'));
  const wss = new WebSocketServer({ server: http });
  wss.on('connection', (ws) => ws.on('message', (d) => ws.send(d)));
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const c of wss.clients) c.terminate();
    http.close();
  });
  const target = `127.0.0.1:${(http.address() as AddressInfo).port}`;
  const dead = `127.0.0.1:${await freePort()}`;
  const { gw, file } = await gatewayWithAccessLog(t);
  await apply(gw, [
    ['cluster', 'up', { targets: [target] }],
    ['cluster', 'gone', { targets: [dead] }],
    ['route', 'ws', { pathPrefix: '/ws', cluster: 'up', websocket: {} }],
    ['route', 'wsgone', { pathPrefix: '/gone', cluster: 'gone', websocket: {} }],
  ]);
  const url = gw.dataUrl.replace('http://', 'ws://');
  const ws = new WebSocket(`${url}/ws/echo`);
  const upgraded = new Promise<string | undefined>((resolve) => ws.once('upgrade', (res) => resolve(res.headers['x-request-id'] as string | undefined)));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  assert.match(String(await upgraded), /^w0-[^,]+$/, 'the 101 carries the request id, once');
  ws.send('hi');
  await new Promise((resolve) => ws.once('message', resolve));
  ws.close();
  const refused = new WebSocket(`${url}/gone/x`);
  const status = await new Promise<number>((resolve) => {
    refused.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    refused.once('error', () => resolve(-1));
  });
  assert.equal(status, 502);
  await shipped();
  assert.equal(await requestsTotal(gw, { route: 'ws', status_class: '1xx' }), 1);
  const m = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root })).text;
  assert.match(m, new RegExp(`switchyard_upstream_duration_seconds_count\\{tenant="default",cluster="up",target="${target}"\\} 1\\n`), 'the handshake\'s time to its answer');
  assert.match(m, new RegExp(`switchyard_upstream_errors_total\\{tenant="default",cluster="gone",target="${dead}",kind="connect"\\} 1\\n`), 'the refused connection');
  const lines = accessLines(file);
  assert.deepEqual(
    lines.map((l) => [l.route, l.status, l.upstream, typeof l.upstreamMs]),
    [
      ['ws', 101, target, 'number'],
      ['wsgone', 502, null, 'object'],
    ],
  );
});

test('a target that cuts its answer after the head counts as a failed attempt (reset)', BOUNDED, async (t) => {
  const cutter = createNetServer((sock) => {
    sock.once('data', () => {
      sock.write('HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\nthe start');
      setTimeout(() => sock.destroy(), 50);
    });
    sock.on('error', () => undefined);
  });
  await new Promise<void>((r) => cutter.listen(0, '127.0.0.1', r));
  t.after(() => cutter.close());
  const target = `127.0.0.1:${(cutter.address() as AddressInfo).port}`;
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'cut', { targets: [target] }],
    ['route', 'c', { pathPrefix: '/c', cluster: 'cut' }],
  ]);
  const got = await exchangeBytes(Number(new URL(gw.dataUrl).port), 'GET /c/x HTTP/1.1\r\nhost: x\r\n\r\n', () => false);
  assert.match(got, /^HTTP\/1\.1 200/, 'the head went out, then the connection was cut');
  await shipped();
  const m = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root })).text;
  assert.match(m, new RegExp(`switchyard_upstream_errors_total\\{tenant="default",cluster="cut",target="${target}",kind="reset"\\} 1\\n`), m.split('\n').filter((l) => l.includes('upstream_errors')).join('\n'));
});

test('an access line of a request refused before routing names its path (413), but not a target refused for its length (414)', BOUNDED, async (t) => {
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    edit: (c) => {
      c.log = { ...(c.log as Record<string, Json>), access: { enabled: true, path: 'access.log' } };
      c.limits = { ...(c.limits as Record<string, Json>), maxBodyBytes: 10, maxTargetBytes: 200 };
    },
  });
  await apply(gw, [['route', 'f', { pathPrefix: '/f', directResponse: { statusCode: 200, body: 'ok' } }]]);
  const port = Number(new URL(gw.dataUrl).port);
  const big = await exchangeBytes(port, 'POST /f/upload?x=1 HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n', (g) => /\r\n\r\n/.test(g));
  assert.match(big, /^HTTP\/1\.1 413/);
  const long = await exchangeBytes(port, `GET /f/${'a'.repeat(300)}?q=${'b'.repeat(300)} HTTP/1.1\r\nhost: x\r\n\r\n`, (g) => /\r\n\r\n/.test(g));
  assert.match(long, /^HTTP\/1\.1 414/);
  await sleep(500);
  const lines = accessLines(join(gw.dir, 'access.log'));
  assert.deepEqual(
    lines.map((l) => [l.status, l.path]),
    [
      [413, '/f/upload?x=1'],
      [414, null],
    ],
  );
});
