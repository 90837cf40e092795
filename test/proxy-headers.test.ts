import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { rawRequest } from './helpers/raw-http.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { BOUNDED } from './helpers/wait.js';

/** RFC 9110 §7.6.1 connection-specific fields, and the legacy ones a proxy also drops. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'te', 'transfer-encoding', 'upgrade', 'trailer', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate'];

/** A gateway with one catch-all route to an echoing upstream (most tests here start so). */
async function echoGateway(t: TestContext): Promise<{ up: Upstream; gw: Gateway }> {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'echo', { targets: [up.target] }],
    ['route', 'echo', { cluster: 'echo' }],
  ]);
  return { up, gw };
}

test('hop-by-hop request headers, including those named in Connection, never reach the upstream (nor the console session cookie); end-to-end ones do', BOUNDED, async (t) => {
  const { gw } = await echoGateway(t);

  const cases: { what: string; head: string[]; secrets: string[]; body?: string }[] = [
    {
      what: 'Connection naming two custom headers, with keep-alive, TE, Proxy-*',
      head: [
        'Connection: close, X-Secret, x-other-secret',
        'X-Secret: 1',
        'X-Other-Secret: 2',
        'Keep-Alive: timeout=5, max=100',
        'TE: trailers',
        'Proxy-Authorization: Basic dXNlcjpwYXNz',
        'Proxy-Connection: keep-alive',
        'Trailer: X-Checksum',
      ],
      secrets: ['x-secret', 'x-other-secret'],
    },
    {
      what: 'Connection with odd spacing and case',
      head: ['Connection:close ,  X-B  ,,X-a', 'X-A: a', 'X-B: b'],
      secrets: ['x-a', 'x-b'],
    },
    {
      what: 'Upgrade (not a WebSocket handshake)',
      head: ['Connection: close, upgrade', 'Upgrade: h2c, foo/2'],
      secrets: [],
    },
    {
      what: 'a chunked request body (Transfer-Encoding is hop-by-hop; the body itself passes)',
      head: ['Connection: close, x-secret', 'X-Secret: 1', 'Transfer-Encoding: chunked'],
      secrets: ['x-secret'],
      body: '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
    },
  ];
  for (const c of cases) {
    const method = c.body ? 'POST' : 'GET';
    const r = await rawRequest(
      gw.dataPort,
      [`${method} /hop/check?x=1 HTTP/1.1`, `Host: gw.example:${gw.dataPort}`, 'X-Keep: kept', 'Cookie: a=b', 'Authorization: Bearer end-to-end', ...c.head],
      c.body ?? '',
    );
    assert.equal(r.status, 200, `${c.what}: ${r.raw.slice(0, 400)}`);
    const seen = r.json.headers as Record<string, string>;
    for (const h of [...HOP_BY_HOP, ...c.secrets]) {
      // The gateway's own hop to the upstream has its own Connection (undici: keep-alive)
      // and, for a streamed body, its own framing: none of the client's values pass.
      if (h === 'connection') {
        assert.ok(seen[h] === undefined || seen[h] === 'keep-alive', `${c.what}: the upstream received connection: ${seen[h]}`);
        continue;
      }
      if (h === 'transfer-encoding' && c.body) continue;
      assert.equal(seen[h], undefined, `${c.what}: the upstream received ${h}: ${seen[h]}`);
    }
    assert.equal(seen['x-keep'], 'kept', `${c.what}: an end-to-end header passes`);
    assert.equal(seen.cookie, 'a=b');
    assert.equal(seen.authorization, 'Bearer end-to-end', 'Authorization is end-to-end (only Proxy-Authorization is hop-by-hop)');
    if (c.body) assert.equal(r.json.bodyBytes, 11, `${c.what}: the body passes`);
  }

  // Regression: the admin console's session cookie (browsers send it to any port of the host)
  // reached a tenant's upstream, which could replay it against the admin API.
  const withSession = await request(`${gw.dataUrl}/api/v1/tenants`, { headers: { cookie: 'a=1; switchyard_session=x; b=2' } });
  assert.equal(withSession.status, 200, withSession.text);
  assert.equal(withSession.json.headers.cookie, 'a=1; b=2', 'the console session pair is dropped, the others pass');
  const onlySession = await request(`${gw.dataUrl}/api/v1/tenants`, { headers: { cookie: 'switchyard_session=x' } });
  assert.equal(onlySession.json.headers.cookie, undefined, 'a Cookie header holding nothing else is dropped');
});

// Regression test: upstreamHeaders once read the Connection list with
// `ex.header('connection')`, the FIRST Connection field line only. Field lines with the
// same name combine into one list (RFC 9110 §5.3), so a header named only in a later
// Connection line reached the upstream (fixed in src/worker/proxy.ts, commit 1ef6e18).
test('headers named in a second Connection line are hop-by-hop too', BOUNDED, async (t) => {
  const { gw } = await echoGateway(t);
  const r = await rawRequest(gw.dataPort, ['GET /hop HTTP/1.1', 'Host: x', 'Connection: x-a', 'Connection: close, X-B', 'X-A: a', 'X-B: b', 'X-Keep: kept']);
  assert.equal(r.status, 200, r.raw);
  assert.equal(r.json.headers['x-keep'], 'kept');
  assert.equal(r.json.headers['x-a'], undefined, 'x-a (first Connection line) is stripped');
  assert.equal(r.json.headers['x-b'], undefined, 'x-b (second Connection line) is stripped');
});

// Regression: undici refuses such a request before sending it, and its Pool then kept the
// connection it had picked marked busy for good: after 256 of them (the pool's size) the
// cluster route stopped answering until the next publish.
test('a header value with a DEL byte (uWS lets it through) gets 400 Svc.Data.BadRequest, and 300 of them do not use up the upstream connections', BOUNDED, async (t) => {
  const { up, gw } = await echoGateway(t);
  const before = up.requests.length;
  for (let batch = 0; batch < 6; batch++) {
    const answers = await Promise.all(Array.from({ length: 50 }, () => rawRequest(gw.dataPort, ['GET /bad HTTP/1.1', 'Host: x', 'X-Odd: a\x7fb', 'Connection: close'])));
    for (const r of answers) {
      assert.equal(r.status, 400, r.raw);
      assert.equal(r.json.code, 'Svc.Data.BadRequest');
    }
  }
  assert.equal(up.requests.length, before, 'none of them reached the upstream');
  const ok = await rawRequest(gw.dataPort, ['GET /good HTTP/1.1', 'Host: x', 'Connection: close']);
  assert.equal(ok.status, 200, ok.raw);
  assert.equal(ok.json.url, '/good');
});

test('a request whose Transfer-Encoding is not chunked alone gets 400 Svc.Data.BadFraming, never reaches the upstream, and its connection closes', BOUNDED, async (t) => {
  // Regression: uWS reads any Transfer-Encoding as chunked, so "xchunked" with body "abc"
  // waited for a 0xabc-byte chunk: the request hung. RFC 9112 §6.3 asks for 400 and close.
  const { up, gw } = await echoGateway(t);
  const before = up.requests.length;
  // `gzip, chunked`: uWS undoes only the chunked, so the gzip bytes went upstream unmarked as the body.
  for (const te of ['xchunked', 'gzip', 'chunked, gzip', 'gzip, chunked', 'chunked, chunked']) {
    // no Connection: close from the client: the gateway must close on its own
    const r = await rawRequest(gw.dataPort, ['POST /framing HTTP/1.1', 'Host: x', `Transfer-Encoding: ${te}`], 'abc');
    assert.equal(r.status, 400, `${te}: ${r.raw}`);
    assert.equal(r.json.code, 'Svc.Data.BadFraming');
    assert.match(r.raw, /\r\nconnection: close\r\n/i, `${te}: the connection is closed after the answer`);
  }
  assert.equal(up.requests.length, before, 'none of them reached the upstream');
  const ok = await rawRequest(gw.dataPort, ['POST /framing HTTP/1.1', 'Host: x', 'Transfer-Encoding: Chunked', 'Connection: close'], '3\r\nabc\r\n0\r\n\r\n');
  assert.equal(ok.status, 200, ok.raw);
  assert.equal(ok.json.bodyBytes, 3, 'chunked alone: the body is read and forwarded');
});

/** Writes `bytes` in one packet; resolves with all the gateway answered and whether it closed within `ms`. */
function sendAtOnce(port: number, bytes: string, ms = 3_000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    const s = connect(port, '127.0.0.1', () => s.write(bytes));
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ text, closed: false });
    }, ms);
    s.setEncoding('latin1').on('data', (d: string) => (text += d));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
  });
}

test('bytes sent behind a refused request are never read as a request of their own', BOUNDED, async (t) => {
  // Regression: the 400-and-close of a framing refusal was written from inside uWS's
  // request callback, where a close is only a flag: uWS then parsed the bytes behind the
  // refused request as a new request and forwarded it (request smuggling past a front
  // proxy that frames the body differently).
  const { up, gw } = await echoGateway(t);
  await apply(gw, [
    ['route', 'fixed', { pathPrefix: '/fixed', order: 5, directResponse: { statusCode: 200, body: 'fixed' } }],
    ['orch', 'two-keys', {
      nodes: [
        { id: 'a', step: 'key-auth', settings: { keys: [{ id: 'a', sha256: 'a'.repeat(64) }] } },
        { id: 'b', step: 'key-auth', settings: { keys: [{ id: 'b', sha256: 'b'.repeat(64) }] } },
      ],
      links: [],
      groups: [{ id: 'g', nodes: ['a', 'b'], merge: 'all' }],
    }],
    ['route', 'grp', { pathPrefix: '/grp', order: 5, cluster: 'echo', steps: [{ code: 'orch', settings: { ref: 'two-keys' } }] }],
  ]);
  const smuggled = 'DELETE /account HTTP/1.1\r\nHost: x\r\n\r\n';
  const before = up.requests.length;
  for (const first of [
    'POST /framing HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n',
    'POST /fixed HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n',
    'POST /framing HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello',
    // Two lengths: uWS frames by the first, a front proxy may by the last (the body is read ahead before the upstream call).
    'POST /framing HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 10\r\n\r\nhello',
    // A backslash refusal must not skip the framing check (a review found it did).
    'POST /fr\\aming HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n',
    // A step reply decided after the callback (a group's), still in uWS's parse of the packet.
    'POST /grp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello',
  ]) {
    const r = await sendAtOnce(gw.dataPort, first + smuggled);
    assert.ok(r.closed, `the connection closes: ${JSON.stringify(r.text)}`);
    assert.equal((r.text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length <= 1 && !/HTTP\/1\.1 200/.test(r.text), true, `no answer to the bytes behind: ${JSON.stringify(r.text)}`);
  }
  assert.equal(up.requests.length, before, 'nothing reached the upstream');
});

test('routes the gateway answers itself (directResponse, redirect) refuse a bad Transfer-Encoding too, and close', BOUNDED, async (t) => {
  // Regression: fixed answers were written straight from the request callback, before the
  // framing check, so "Transfer-Encoding: gzip" got 200 on a connection left open.
  const { gw } = await echoGateway(t);
  await apply(gw, [
    ['route', 'fixed', { pathPrefix: '/fixed', order: 5, directResponse: { statusCode: 200, body: 'fixed' } }],
    ['route', 'moved', { pathPrefix: '/moved', order: 5, redirect: { location: '/elsewhere' } }],
  ]);
  for (const path of ['/fixed', '/moved']) {
    const r = await rawRequest(gw.dataPort, [`POST ${path} HTTP/1.1`, 'Host: x', 'Transfer-Encoding: gzip'], 'abc');
    assert.equal(r.status, 400, `${path}: ${r.raw}`);
    assert.equal(r.json.code, 'Svc.Data.BadFraming');
    assert.match(r.raw, /\r\nconnection: close\r\n/i, `${path}: the connection is closed after the answer`);
    const ok = await rawRequest(gw.dataPort, [`POST ${path} HTTP/1.1`, 'Host: x', 'Transfer-Encoding: chunked', 'Connection: close'], '3\r\nabc\r\n0\r\n\r\n');
    assert.equal(ok.status, path === '/fixed' ? 200 : 302, `${path}, chunked: ${ok.raw}`);
  }
});

test('X-Forwarded-For/Proto/Host/Port are set by the gateway; a client-supplied X-Forwarded-For is replaced by the peer', BOUNDED, async (t) => {
  const { gw } = await echoGateway(t);
  const plain = await request(`${gw.dataUrl}/xf`, { headers: { host: 'shop.example:8443' } });
  assert.equal(plain.status, 200, plain.text);
  assert.equal(plain.json.headers['x-forwarded-for'], '127.0.0.1');
  assert.equal(plain.json.headers['x-forwarded-proto'], 'http');
  assert.equal(plain.json.headers['x-forwarded-host'], 'shop.example:8443');
  assert.equal(plain.json.headers['x-forwarded-port'], String(gw.dataPort), 'the data port the client connected to');
  assert.equal(plain.json.headers.host, 'shop.example:8443', 'the Host header is passed through');

  const spoofed = await request(`${gw.dataUrl}/xf`, {
    headers: { host: 'real.example', 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example', 'x-forwarded-port': '443' },
  });
  // Regression: the client's X-Forwarded-For was kept and the peer appended, from any client.
  assert.equal(spoofed.json.headers['x-forwarded-for'], '127.0.0.1', 'the peer alone: no proxy is trusted');
  assert.equal(spoofed.json.headers['x-forwarded-proto'], 'http', 'proto is the gateway’s own view');
  assert.equal(spoofed.json.headers['x-forwarded-host'], 'real.example', 'host is the gateway’s own view');
  assert.equal(spoofed.json.headers['x-forwarded-port'], String(gw.dataPort), 'port is the gateway’s own view');
});

test('hop-by-hop response headers, including those the upstream names in Connection, never reach the client', BOUNDED, async (t) => {
  const { gw } = await echoGateway(t);
  const upstreamHeaders = {
    connection: 'X-Up-Secret, x-up-other',
    'x-up-secret': 'hidden',
    'x-up-other': 'hidden too',
    'keep-alive': 'timeout=99',
    'proxy-authenticate': 'Basic realm="upstream"',
    'proxy-connection': 'keep-alive',
    upgrade: 'foo/1',
    'x-up-keep': 'visible',
    'set-cookie': ['a=1', 'b=2'],
  };
  for (const via of ['raw', 'node'] as const) {
    const head = [`GET /resp HTTP/1.1`, 'Host: x', `X-Up-Headers: ${JSON.stringify(upstreamHeaders)}`];
    const got =
      via === 'raw'
        ? (await rawRequest(gw.dataPort, [...head, 'Connection: close'])).headerList
        : Object.entries((await request(`${gw.dataUrl}/resp`, { headers: { 'x-up-headers': JSON.stringify(upstreamHeaders) } })).headers).flatMap(
            ([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x] as [string, string]) : [[k, String(v)] as [string, string]]),
          );
    const names = got.map(([k]) => k);
    for (const h of ['x-up-secret', 'x-up-other', 'keep-alive', 'proxy-authenticate', 'proxy-connection', 'upgrade']) {
      assert.ok(!names.includes(h), `${via}: the client received ${h}`);
    }
    for (const [k, v] of got) {
      if (k === 'connection') assert.ok(!/x-up/i.test(v), `${via}: Connection is the gateway's own (${v})`);
    }
    assert.ok(got.some(([k, v]) => k === 'x-up-keep' && v === 'visible'), `${via}: an end-to-end response header passes`);
    assert.deepEqual(got.filter(([k]) => k === 'set-cookie').map(([, v]) => v), ['a=1', 'b=2'], `${via}: repeated headers pass one by one`);
  }
});

test('an upstream header value in UTF-8 (a filename with accents) reaches the client byte for byte', BOUNDED, async (t) => {
  // Regression: values were read as latin1 and uWS.js writes strings as UTF-8, so each byte
  // above 0x7f went out as two ("résumé" became "rÃ©sumÃ©").
  const { up, gw } = await echoGateway(t);
  // node:http sends header strings as they are, one byte a character (up to 0xff): the
  // UTF-8 bytes of the filename, given as such a string; the request header itself stays
  // ASCII (JSON escapes).
  const utf8 = Buffer.from('attachment; filename="résumé-日本.pdf"', 'utf8');
  const extra = JSON.stringify({ 'content-disposition': utf8.toString('latin1'), 'x-plain': 'ascii' }).replace(/[\u0080-\u00ff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const head = (path: string) => [`GET ${path} HTTP/1.1`, 'Host: x', `X-Up-Headers: ${extra}`, 'Connection: close'];
  const line = (raw: string) => Buffer.from(/^content-disposition: .*$/im.exec(raw)?.[0] ?? '', 'latin1');
  const direct = await rawRequest(Number(up.target.split(':')[1]), head('/file'));
  const via = await rawRequest(gw.dataPort, head('/file'));
  assert.equal(via.status, 200, via.raw);
  assert.ok(line(direct.raw).includes(utf8), `the upstream sends the UTF-8 bytes: ${direct.raw}`);
  assert.equal(line(via.raw).toString('hex'), line(direct.raw).toString('hex'), 'the same bytes through the gateway');
  assert.match(via.raw, /^x-plain: ascii$/im);
});

test('routes match the normalised path (/a/../b is /b) and the upstream receives that same path', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'echo', { targets: [up.target] }],
    // /a has the higher order: if the raw path were matched, /a/../b would land here.
    ['route', 'a', { pathPrefix: '/a', order: 100, directResponse: { statusCode: 403, body: 'route a' } }],
    ['route', 'b', { pathPrefix: '/b', order: 1, cluster: 'echo' }],
  ]);
  const send = (target: string) => rawRequest(gw.dataPort, [`GET ${target} HTTP/1.1`, 'Host: x', 'Connection: close']);

  const forwarded: [string, string][] = [
    ['/a/../b', '/b'],
    ['/a/../b/x?q=1', '/b/x?q=1'],
    ['/a/%2e%2e/b/x', '/b/x'],
    ['/a/%2E%2E/b', '/b'],
    ['/a/./../b/y', '/b/y'],
    ['/a/x/../../b/z', '/b/z'],
    ['/./b/x', '/b/x'],
    ['/b/./x', '/b/x'],
  ];
  for (const [target, path] of forwarded) {
    const r = await send(target);
    assert.equal(r.status, 200, `${target} matches route b: ${r.status} ${r.text}`);
    assert.equal(r.json.url, path, `${target}: the upstream receives the path the route matched`);
  }
  for (const target of ['/b/../a', '/b/../a/x', '/b/%2e%2e/a', '/a', '/a/b']) {
    const r = await send(target);
    assert.equal(`${r.status} ${r.text}`, '403 route a', `${target} matches route a`);
  }
  // Above the root stays at the root: /../b is /b.
  const r = await send('/../../b/x');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.url, '/b/x');
  // Regression: a backslash passed the route table as a plain byte, while WHATWG URL
  // parsers upstream read it as '/': /b\..\a reached the upstream as /a past route a.
  // escapedSlashes "reject" (the default) refuses it.
  const before = up.requests.length;
  for (const target of ['/b\\..\\a', '/b/..\\a', '/b\\x']) {
    const refused = await send(target);
    assert.equal(refused.status, 400, `${target}: ${refused.text}`);
    assert.equal(refused.json.code, 'Svc.Data.BadRequest');
  }
  assert.equal(up.requests.length, before, 'nothing reached the upstream');
});

// The steps' header edits are applied in the proxy's one pass over the headers, together
// with the X-Forwarded-* it sets: an edit of one of those wins, exactly once.
test('a step that sets or removes an X-Forwarded header overrides the gateway value, once', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'echo', { targets: [up.target] }],
    [
      'route',
      'edited',
      {
        cluster: 'echo',
        steps: [{ code: 'request-headers', settings: { set: { 'X-Forwarded-Proto': 'https', 'x-extra': 'e' }, remove: ['x-forwarded-host'], add: { 'x-forwarded-for': '10.9.9.9' } } }],
      },
    ],
  ]);
  const r = await request(`http://127.0.0.1:${gw.dataPort}/edited`, { headers: { 'x-forwarded-proto': 'gopher', 'x-forwarded-for': '192.0.2.1' } });
  assert.equal(r.status, 200);
  const raw = r.json.rawHeaders as string[];
  const values = (name: string) => raw.flatMap((v, i) => (i % 2 === 0 && v.toLowerCase() === name ? [raw[i + 1]!] : []));
  assert.deepEqual(values('x-forwarded-proto'), ['https']);
  assert.deepEqual(values('x-forwarded-host'), []);
  // The socket peer (the client's own chain is not believed: no trusted proxies), then the step's add.
  assert.deepEqual(values('x-forwarded-for'), ['127.0.0.1', '10.9.9.9']);
  assert.deepEqual(values('x-extra'), ['e']);
});
