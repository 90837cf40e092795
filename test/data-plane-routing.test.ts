import { test } from 'node:test';
import { connect } from 'node:net';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { envelopeProblem, request } from './helpers/http.js';
import { rawRequest } from './helpers/raw-http.js';
import { startUpstream } from './helpers/upstream.js';
import { freePort } from './helpers/ports.js';
import { ROOT_KEY, apply, publish, setEntity } from './helpers/admin.js';
import { BOUNDED } from './helpers/wait.js';

const direct = (body: string, extra: Record<string, unknown> = {}) => ({ directResponse: { statusCode: 200, body }, ...extra });
/** A rate limit that lets exactly one request through for the life of the test. */
const ONE_TOKEN = [{ code: 'rate-limit', settings: { requestsPerSecond: 0.001, burst: 1 } }];

test('the upstream receives the normalised path and the query byte for byte', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'echo', { targets: [up.target] }],
    ['route', 'echo', { cluster: 'echo', pathPrefix: '/echo' }],
  ]);

  // [sent, received]: the path in its normal form (docs/reference.md "Paths"), the query untouched.
  const targets = [
    ['/echo', '/echo'],
    ['/echo/plain/path', '/echo/plain/path'],
    ['/echo/a%20b/%7Euser/caf%c3%a9/%3f', '/echo/a%20b/~user/caf%C3%A9/%3F'],
    ['/echo/x?a=1&a=2', '/echo/x?a=1&a=2'],
    ['/echo/q?b=%20&c=a+b&d=%2F%3F%26&e=&flag&=&&x=%7e', '/echo/q?b=%20&c=a+b&d=%2F%3F%26&e=&flag&=&&x=%7e'],
    ['/echo//double//slashes/', '/echo/double/slashes/'],
    ['/echo/./dot/seg', '/echo/dot/seg'],
    ["/echo/semi;p=1,q=2/(paren)!$'*@:", "/echo/semi;p=1,q=2/(paren)!$'*@:"],
    ['/echo/q?z=1?2/3', '/echo/q?z=1?2/3'],
    ['/echo/enc?%41%42=%61%62&UPPER=%2a%2A', '/echo/enc?%41%42=%61%62&UPPER=%2a%2A'],
    ['/echo/app.min.js', '/echo/app.min.js'],
  ];
  for (const [target, received] of targets) {
    // The raw client sends the request line exactly as written.
    const r = await rawRequest(gw.dataPort, [`GET ${target} HTTP/1.1`, `Host: 127.0.0.1:${gw.dataPort}`, 'Connection: close']);
    assert.equal(r.status, 200, `${target}: ${r.raw.slice(0, 300)}`);
    assert.equal(r.json.url, received, `upstream saw ${r.json.url} for ${target}`);
    assert.equal(r.json.method, 'GET');
  }

  // Also through an ordinary client (node:http), with a body and other methods.
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    const r = await request(`${gw.dataUrl}/echo/m?k=v&k=w`, { method, body: 'hello' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.method, method);
    assert.equal(r.json.url, '/echo/m?k=v&k=w');
    assert.equal(r.json.bodyBytes, 5);
  }
});

// Regression test: the Exchange once stored `req.getQuery() ?? ''`, losing uWS's
// distinction between no query (undefined) and an empty one (''), so the upstream got
// `/echo/q` for `/echo/q?` (fixed in src/worker/exchange.ts + proxy.ts, commit 1ef6e18).
test('an empty query (a bare "?") reaches the upstream unchanged', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'echo', { targets: [up.target] }],
    ['route', 'echo', { cluster: 'echo' }],
  ]);
  const r = await rawRequest(gw.dataPort, ['GET /echo/q? HTTP/1.1', 'Host: x', 'Connection: close']);
  assert.equal(r.status, 200, r.raw);
  assert.equal(r.json.url, '/echo/q?', 'path and query byte for byte: the "?" is part of the request target');
});

test('routes match by order, then longer prefix; a route without pathPrefix catches every path; no match is a 404 envelope', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    // A larger order wins even over a longer prefix.
    ['route', 'o-high', direct('o-high', { pathPrefix: '/o', order: 10 })],
    ['route', 'o-low-longer', direct('o-low-longer', { pathPrefix: '/o/longer', order: 1 })],
    // Same order: the longer prefix wins.
    ['route', 't-short', direct('t-short', { pathPrefix: '/t' })],
    ['route', 't-long', direct('t-long', { pathPrefix: '/t/long' })],
    // Negative order.
    ['route', 'neg', direct('neg', { pathPrefix: '/neg', order: -5 })],
  ]);
  const body = async (p: string) => {
    const r = await request(`${gw.dataUrl}${p}`);
    return r.status === 200 ? r.text : `${r.status} ${r.json?.code}`;
  };
  assert.equal(await body('/o/longer/x'), 'o-high');
  assert.equal(await body('/o'), 'o-high');
  assert.equal(await body('/t/long/x'), 't-long');
  assert.equal(await body('/t/lon'), 't-short');
  assert.equal(await body('/tx'), 't-short', 'pathPrefix is a plain string prefix');
  assert.equal(await body('/neg/1'), 'neg');

  // No route matches: the 404 envelope, with a data-plane traceId.
  const miss = await request(`${gw.dataUrl}/nothing/here`);
  assert.equal(miss.status, 404, miss.text);
  assert.equal(envelopeProblem(miss), null);
  assert.equal(miss.json.code, 'Svc.Data.NoRoute');
  assert.match(miss.json.traceId, /^w0-/);

  // A catch-all (no pathPrefix, order 0): takes what nothing else matched, and also
  // outranks the order -5 route (order first, prefix length only breaks ties).
  await setEntity(gw, 'route', 'all', direct('catch-all'));
  await publish(gw);
  assert.equal(await body('/nothing/here'), 'catch-all');
  assert.equal(await body('/'), 'catch-all');
  assert.equal(await body('/neg/1'), 'catch-all', 'the catch-all (order 0) outranks a prefix route of order -5');
  assert.equal(await body('/t/long/x'), 't-long', 'a prefix route of equal order outranks the catch-all (longer prefix)');
  assert.equal(await body('/o/longer'), 'o-high');

  // A catch-all with the highest order takes everything.
  await setEntity(gw, 'route', 'all', direct('catch-all-top', { order: 100 }));
  await publish(gw);
  for (const p of ['/o/longer/x', '/t/long', '/neg', '/zzz']) assert.equal(await body(p), 'catch-all-top', p);
});

test('redirect answers 30x with Location; directResponse answers its status, body and headers', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['route', 'moved', { pathPrefix: '/moved', redirect: { location: 'https://example.org/new?x=1', statusCode: 301 } }],
    ['route', 'found', { pathPrefix: '/found', redirect: { location: '/elsewhere' } }],
    ['route', 'temp', { pathPrefix: '/temp', redirect: { location: '/t', statusCode: 307 } }],
    ['route', 'teapot', { pathPrefix: '/teapot', directResponse: { statusCode: 418, body: 'short and stout', headers: { 'X-Kettle': 'on' } } }],
    ['route', 'json', { pathPrefix: '/json', directResponse: { statusCode: 200, body: '{"a":1}', headers: { 'content-type': 'application/json' } } }],
    ['route', 'empty', { pathPrefix: '/empty', directResponse: { statusCode: 204 } }],
  ]);
  const m = await request(`${gw.dataUrl}/moved/deep?q=1`);
  assert.equal(m.status, 301);
  assert.equal(m.headers.location, 'https://example.org/new?x=1');
  const f = await request(`${gw.dataUrl}/found`, { method: 'POST', body: 'x' });
  assert.equal(f.status, 302, 'statusCode defaults to 302');
  assert.equal(f.headers.location, '/elsewhere');
  const tmp = await request(`${gw.dataUrl}/temp`);
  assert.equal(tmp.status, 307);
  assert.equal(tmp.headers.location, '/t');

  const tea = await request(`${gw.dataUrl}/teapot`);
  assert.equal(tea.status, 418);
  assert.equal(tea.text, 'short and stout');
  assert.equal(tea.headers['x-kettle'], 'on');
  assert.match(String(tea.headers['content-type']), /^text\/plain/, 'a text content-type by default');
  const j = await request(`${gw.dataUrl}/json`);
  assert.deepEqual(j.json, { a: 1 });
  assert.equal(j.headers['content-type'], 'application/json');
  const e = await request(`${gw.dataUrl}/empty`);
  assert.equal(e.status, 204);
  assert.equal(e.text, '');
});

test('HEAD answers carry no body and end, so the next request on the connection is answered', BOUNDED, async (t) => {
  // Regression: fixed replies, envelopes and the steps' own answers sent their body to
  // HEAD too; a keep-alive client then read those bytes as the start of the next answer.
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const big = 'b'.repeat(40_000); // too large for one uWS write: goes out through an Exchange
  await apply(gw, [
    ['cluster', 'echo', { targets: [up.target] }],
    ['route', 'small', { pathPrefix: '/small', ...direct('hello world') }],
    ['route', 'big', { pathPrefix: '/big', ...direct(big) }],
    ['route', 'keyed', { pathPrefix: '/keyed', cluster: 'echo', steps: [{ code: 'key-auth', settings: { keys: [{ id: 'a', sha256: 'a'.repeat(64) }] } }] }],
    ['route', 'proxied', { pathPrefix: '/proxied', cluster: 'echo' }],
  ]);
  /**
   * HEAD `path`, then, once its head has arrived, GET /small on the same connection, as a
   * keep-alive client does: every byte until the server closes.
   */
  const headThenGet = (path: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const sock = connect({ host: '127.0.0.1', port: gw.dataPort });
      let text = '';
      let sentGet = false;
      sock.on('data', (d) => {
        text += d.toString('latin1');
        if (!sentGet && text.includes('\r\n\r\n')) {
          sentGet = true;
          sock.write('GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        }
      });
      sock.on('end', () => resolve(text));
      sock.on('error', reject);
      sock.setTimeout(5_000, () => sock.destroy(new Error(`no close within 5 s: ${text.slice(0, 300)}`)));
      sock.write(`HEAD ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    });
  const cases: [string, number, number][] = [
    ['/small', 200, 11],
    ['/big', 200, big.length],
    ['/nowhere', 404, -1], // no route: the 404 envelope's length
    ['/keyed', 401, -1], // key-auth answers itself: its envelope's length
  ];
  for (const [path, status, length] of cases) {
    const text = await headThenGet(path);
    const [head, rest] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
    assert.match(head, new RegExp(`^HTTP/1.1 ${status} `), `${path}: ${text.slice(0, 300)}`);
    const reported = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
    if (length >= 0) assert.equal(reported, length, `${path}: the length a GET would get`);
    else assert.ok(reported > 0, `${path}: the envelope's length is reported`);
    assert.ok(rest.startsWith('HTTP/1.1 200 '), `${path}: the GET's answer follows the HEAD's head directly: ${JSON.stringify(rest.slice(0, 80))}`);
    assert.ok(rest.endsWith('\r\n\r\nhello world'), `${path}: ${JSON.stringify(rest.slice(-80))}`);
  }
  // A proxied HEAD: the upstream's length is reported, and the connection serves the next
  // request (it used to hang: uWS.js took the reported length as body still to come).
  const proxied = await headThenGet('/proxied/x');
  assert.match(proxied, /^HTTP\/1.1 200 [^]*\r\ncontent-length: \d+\r\n/i, proxied.slice(0, 300));
  assert.ok(proxied.slice(proxied.indexOf('\r\n\r\n') + 4).startsWith('HTTP/1.1 200 '), proxied.slice(0, 300));
  assert.ok(proxied.endsWith('\r\n\r\nhello world'), proxied.slice(-80));
});

test('steps do not run on redirect and directResponse routes, and do run on cluster routes', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'limited-direct', { pathPrefix: '/direct', directResponse: { statusCode: 200, body: 'direct' }, steps: ONE_TOKEN }],
    ['route', 'limited-redirect', { pathPrefix: '/redirect', redirect: { location: '/x' }, steps: ONE_TOKEN }],
    ['route', 'limited-cluster', { pathPrefix: '/cluster', cluster: 'api', steps: ONE_TOKEN }],
  ]);
  for (let i = 0; i < 20; i++) {
    const d = await request(`${gw.dataUrl}/direct`);
    assert.equal(d.status, 200, `directResponse request ${i}: ${d.status} ${d.text}`);
    assert.equal(d.text, 'direct');
    const r = await request(`${gw.dataUrl}/redirect`);
    assert.equal(r.status, 302, `redirect request ${i}: ${r.status} ${r.text}`);
  }
  // The same step on a cluster route: one passes, then 429 (so the step above was live, just not run).
  const first = await request(`${gw.dataUrl}/cluster`);
  assert.equal(first.status, 200, first.text);
  const second = await request(`${gw.dataUrl}/cluster`);
  assert.equal(second.status, 429, second.text);
  assert.equal(second.json?.code, 'Svc.Data.RateLimited');
  assert.ok(Number(second.headers['retry-after']) >= 1, `Retry-After ${second.headers['retry-after']}`);
  assert.equal(up.requests.length, 1, 'the 429 never reached the upstream');
});

test('upstream failures: 502 when nothing listens at the target, 504 when it does not answer in time', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const deadPort = await freePort();
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'dead', { targets: [`127.0.0.1:${deadPort}`] }],
    ['cluster', 'slow', { targets: [up.target], timeouts: { headersMs: 300 } }],
    ['route', 'dead', { pathPrefix: '/dead', cluster: 'dead' }],
    ['route', 'slow', { pathPrefix: '/slow', cluster: 'slow' }],
  ]);
  const d = await request(`${gw.dataUrl}/dead/x`);
  assert.equal(d.status, 502, d.text);
  assert.equal(envelopeProblem(d), null);
  assert.equal(d.json.code, 'Svc.Data.UpstreamUnreachable');
  assert.match(d.json.traceId, /^w0-/);

  const s = await request(`${gw.dataUrl}/slow/x`, { headers: { 'x-up-delay-ms': '2000' } });
  assert.equal(s.status, 504, s.text);
  assert.equal(envelopeProblem(s), null);
  assert.equal(s.json.code, 'Svc.Data.UpstreamTimeout');

  // The same cluster answers in time when the upstream is quick.
  const ok = await request(`${gw.dataUrl}/slow/y`);
  assert.equal(ok.status, 200, ok.text);
});
