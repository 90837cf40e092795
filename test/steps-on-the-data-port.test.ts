import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, deleteEntity, dryRun, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { rawRequest } from './helpers/raw-http.js';
import { BOUNDED } from './helpers/wait.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

// One gateway, one upstream (a JSON echo of what it received), one route per step.
test('built-in steps act on the request, the response, or answer themselves', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const route = (name: string, prefix: string, steps: unknown[]) => ['route', name, { cluster: 'up', pathPrefix: prefix, steps }] as const;
  const r = await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    route('rh', '/rh', [{ code: 'request-headers', settings: { set: { 'x-set': 'v' }, add: { 'x-add': 'a' }, remove: ['x-drop'] } }]),
    route('resp2', '/resp2', [{ code: 'response-headers', settings: { set: { 'x-a': '1' }, add: { 'x-b': '2' }, remove: ['x-a', 'x-b'] } }]),
    route('resp', '/resp', [{ code: 'response-headers', settings: { set: { 'x-served-by': 'gw' }, remove: ['x-up-secret'] } }]),
    route('strip', '/strip', [{ code: 'path-rewrite', settings: { stripPrefix: '/strip' } }]),
    route('pr', '/pr', [{ code: 'path-rewrite', settings: { stripPrefix: '/pr' } }]),
    route('rp', '/rp', [{ code: 'path-rewrite', settings: { replacePrefix: { from: '/rp', to: '/public/' } } }]),
    route('nocontent', '/nocontent', [{ code: 'echo', settings: { status: 204 } }]),
    route('regex', '/regex', [{ code: 'path-rewrite', settings: { regex: { pattern: '^/regex/(\\w+)', replacement: '/v2/$1' } } }]),
    route('legacy', '/legacy', [{ code: 'path-rewrite', settings: { regex: { pattern: '^/legacy/(.*)', replacement: '/new/$1' } } }]),
    route('qpr', '/qpr', [{ code: 'query-params', settings: { remove: ['debug'] } }]),
    route('qp', '/qp', [{ code: 'query-params', settings: { set: { added: 'x y' }, remove: ['secret'] } }]),
    route('method', '/method', [{ code: 'method-restriction', settings: { allow: ['GET'] } }]),
    route('rid', '/rid', [{ code: 'request-id', settings: {} }]),
    route('echo', '/echo', [{ code: 'request-headers', settings: { set: { 'x-step': '1' } } }, { code: 'echo', settings: {} }]),
    route('ipdeny', '/ipdeny', [{ code: 'ip-restriction', settings: { deny: ['127.0.0.0/8'] } }]),
    route('ipallow', '/ipallow', [{ code: 'ip-restriction', settings: { allow: ['127.0.0.1', '::1/128'] } }]),
    route('ipproxy', '/ipproxy', [{ code: 'ip-restriction', settings: { deny: ['203.0.113.0/24'], trustedProxies: ['127.0.0.1'] } }]),
    route('ipproxyallow', '/ipproxyallow', [{ code: 'ip-restriction', settings: { allow: ['10.0.0.0/8'], trustedProxies: ['127.0.0.1'] } }]),
    route('ipmapped', '/ipmapped', [{ code: 'ip-restriction', settings: { deny: ['::ffff:127.0.0.0/104'] } }]),
    route('bot', '/bot', [{ code: 'bot-detection', settings: { deny: ['evilbot'] } }]),
    route('cors', '/cors', [{ code: 'cors', settings: { origins: ['https://app.example'], credentials: true } }]),
    route('key', '/key', [{ code: 'key-auth', settings: { keys: [{ id: 'alice', sha256: sha('alice-key') }], query: 'apikey' } }]),
    route('fault', '/fault', [{ code: 'fault-injection', settings: { abort: { percent: 100, status: 418, body: 'teapot' } } }]),
    route('delay', '/delay', [{ code: 'fault-injection', settings: { delay: { percent: 100, ms: 400 } } }]),
    route('size', '/size', [{ code: 'request-size-limit', settings: { maxBytes: 10 } }]),
  ]);
  assert.equal(r.ok, true);
  const get = (path: string, opts: Parameters<typeof request>[1] = {}) => request(`${gw.dataUrl}${path}`, opts);

  await t.test('request-headers: set, add and remove reach the upstream', async () => {
    const res = await get('/rh', { headers: { 'x-set': 'client', 'x-drop': 'gone', 'x-add': 'first' } });
    assert.equal(res.json.headers['x-set'], 'v');
    assert.equal(res.json.headers['x-drop'], undefined);
    assert.equal(res.json.headers['x-add'], 'first, a');
  });

  await t.test('response-headers: set and remove on the way to the client', async () => {
    const res = await get('/resp', { headers: { 'x-up-headers': JSON.stringify({ 'x-up-secret': 's', 'x-served-by': 'upstream' }) } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-served-by'], 'gw');
    assert.equal(res.headers['x-up-secret'], undefined);
  });

  await t.test('response-headers: remove wins over set and add of the same name (set, add, remove, in that order)', async () => {
    const r = await get('/resp2');
    assert.equal(r.headers['x-a'], undefined);
    assert.equal(r.headers['x-b'], undefined);
  });

  await t.test('cors: Vary: Origin on every answer that depends on the origin; the upstream’s own CORS headers are replaced', async () => {
    // Regressions: answers to no or other origins had no Vary: Origin (a shared cache could
    // serve them to the allowed origin); an upstream's Access-Control-Allow-Origin: * was
    // kept beside ours, and two values fail the browser's check.
    assert.match(String((await get('/cors')).headers.vary), /Origin/);
    assert.match(String((await get('/cors', { headers: { origin: 'https://evil.example' } })).headers.vary), /Origin/);
    const r = await rawRequest(gw.dataPort, ['GET /cors HTTP/1.1', 'Host: x', 'Connection: close', 'Origin: https://app.example', `X-Up-Headers: ${JSON.stringify({ 'access-control-allow-origin': '*', 'access-control-allow-credentials': 'false' })}`]);
    assert.equal(r.status, 200);
    const lines = (name: string) => r.raw.split('\r\n').filter((l) => l.toLowerCase().startsWith(`${name}:`));
    assert.deepEqual(lines('access-control-allow-origin'), ['access-control-allow-origin: https://app.example']);
    assert.deepEqual(lines('access-control-allow-credentials'), ['access-control-allow-credentials: true']);
    // Regression: an origin not on the list kept the upstream's own CORS headers, so an
    // app reflecting Origin with credentials granted any site credentialed reads.
    const reflected = JSON.stringify({ 'access-control-allow-origin': 'https://evil.example', 'access-control-allow-credentials': 'true', 'access-control-expose-headers': 'x-secret' });
    const evil = await rawRequest(gw.dataPort, ['GET /cors HTTP/1.1', 'Host: x', 'Connection: close', 'Origin: https://evil.example', `X-Up-Headers: ${reflected}`]);
    assert.equal(evil.status, 200);
    assert.doesNotMatch(evil.raw, /^access-control-/im, evil.raw);
  });

  await t.test('path-rewrite: strip a prefix, regex replacement; the query is kept', async () => {
    assert.equal((await get('/strip/a/b?q=1')).json.url, '/a/b?q=1');
    assert.equal((await get('/strip')).json.url, '/');
    assert.equal((await get('/regex/users?x')).json.url, '/v2/users?x');
  });

  await t.test('path-rewrite: rewrites the path the route matched on and never sends a dot segment upstream', async () => {
    // Regressions: the raw path was rewritten, so `/x/../pr/secret` (routed as /pr/secret)
    // kept its prefix, and `/pr../secret` became `/../secret` upstream.
    const raw = (target: string) => rawRequest(gw.dataPort, [`GET ${target} HTTP/1.1`, 'Host: x', 'Connection: close']);
    assert.equal((await raw('/x/../pr/secret?q=1')).json.url, '/secret?q=1');
    assert.equal((await raw('/pr/a/./b/../c')).json.url, '/a/c');
    for (const target of ['/pr../secret', '/rp../admin']) {
      const r = await raw(target);
      assert.equal(r.status, 400, `${target}: ${r.raw}`);
      assert.equal(r.json.code, 'Svc.Data.BadRequest');
    }
    assert.equal((await raw('/rp/docs')).json.url, '/public/docs', 'replacePrefix maps as configured, and the result is in normal form (slashes merged)');
  });

  await t.test('path-rewrite changes the path only: a `?` or `#` in a replacement is a compile issue, a captured %3F stays in the path', async () => {
    // Regression: `^/legacy/(.*)` -> `/new?x=$1` turned `/legacy/a&api_key=X` into the
    // query `x=a&api_key=X`, which the route's key-auth had never read.
    const raw = (target: string) => rawRequest(gw.dataPort, [`GET ${target} HTTP/1.1`, 'Host: x', 'Connection: close']);
    const bad: [unknown, string][] = [
      [{ regex: { pattern: '^/legacy/(.*)', replacement: '/new?x=$1' } }, '/steps/0/settings/regex/replacement'],
      [{ regex: { pattern: '^/legacy/(.*)', replacement: '/new/$1#top' } }, '/steps/0/settings/regex/replacement'],
      [{ replacePrefix: { from: '/legacy', to: '/new?x=' } }, '/steps/0/settings/replacePrefix/to'],
    ];
    for (const [settings, pointer] of bad) {
      await setEntity(gw, 'route', 'bad-rewrite', { cluster: 'up', pathPrefix: '/bad-rewrite', steps: [{ code: 'path-rewrite', settings }] });
      const dr = await dryRun(gw);
      assert.equal(dr.status, 422, dr.text);
      const issue = dr.json.issues.find((i) => i.name === 'bad-rewrite');
      assert.equal(issue?.code, 'Compile.Step.Settings', dr.text);
      assert.equal(issue?.pointer, pointer);
      assert.match(issue?.message ?? '', /must not contain `\?` or `#`/);
      await deleteEntity(gw, 'route', 'bad-rewrite');
    }
    for (const [target, url] of [
      ['/legacy/a%3Fapi_key=OTHER', '/new/a%3Fapi_key=OTHER'],
      ['/legacy/a&api_key=OTHER?q=1', '/new/a&api_key=OTHER?q=1'],
      ['/legacy/a%23b', '/new/a%23b'],
    ]) {
      const r = await raw(target!);
      assert.equal(r.json.url, url, target);
      assert.equal(new URL(r.json.url as string, 'http://x').searchParams.get('api_key'), null, `${target}: the upstream reads no api_key`);
    }
  });

  await t.test('a 204 answer the gateway makes itself carries no body and no length', async () => {
    // Regression: echo with status 204 sent Content-Length and a JSON body; a keep-alive
    // client read the body as the start of its next answer.
    const r = await rawRequest(gw.dataPort, ['GET /nocontent HTTP/1.1', 'Host: x', 'Connection: close']);
    assert.equal(r.status, 204, r.raw);
    assert.doesNotMatch(r.raw, /content-length/i);
    assert.equal(r.raw.slice(r.raw.indexOf('\r\n\r\n') + 4), '', 'nothing after the head');
  });

  await t.test('query-params: set and remove, other parameters byte for byte', async () => {
    assert.equal((await get('/qp?a=%2F&secret=1&b')).json.url, '/qp?a=%2F&b&added=x%20y');
    // Regression: untouched parts of the query were rewritten (empty pairs dropped, a bare '?' removed).
    assert.equal((await get('/qpr/x?a=1&&b=2&debug=1')).json.url, '/qpr/x?a=1&&b=2');
    assert.equal((await rawRequest(gw.dataPort, ['GET /qpr/x? HTTP/1.1', 'Host: x', 'Connection: close'])).json.url, '/qpr/x?');
    assert.equal((await get('/qpr/x?a=1&&b=2')).json.url, '/qpr/x?a=1&&b=2');
    assert.equal((await get('/qpr/x?debug=1')).json.url, '/qpr/x');
    // Every pair an upstream could read as the name goes, as key-auth reads its key (nginx's $arg_ ignores case).
    assert.equal((await get('/qpr/x?DEBUG=1&a=1&debug[]=2&x=1;debug=3')).json.url, '/qpr/x?a=1');
  });

  await t.test('method-restriction: 405 with Allow', async () => {
    const res = await get('/method', { method: 'POST', body: 'x' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET');
    assert.equal((await get('/method')).status, 200);
  });

  await t.test('request-id: generated, sent upstream and echoed; a well-formed incoming id is kept', async () => {
    const res = await get('/rid');
    const id = res.headers['x-request-id'];
    assert.match(String(id), /^w0-[0-9a-f]{8}-[0-9a-z]+$/, 'the request\'s own id (worker.json requestId)');
    assert.equal(res.json.headers['x-request-id'], id);
    const kept = await get('/rid', { headers: { 'x-request-id': 'abc-123' } });
    assert.equal(kept.headers['x-request-id'], 'abc-123');
    // Regression: an upstream echoing the id too (Rails does) gave the client two headers.
    const echoed = await rawRequest(gw.dataPort, ['GET /rid HTTP/1.1', 'Host: x', 'Connection: close', 'X-Request-Id: mine-1', `X-Up-Headers: ${JSON.stringify({ 'x-request-id': 'upstream-copy' })}`]);
    assert.deepEqual(echoed.raw.split('\r\n').filter((l) => /^x-request-id:/i.test(l)), ['x-request-id: mine-1'], echoed.raw);
  });

  await t.test('echo: answers with the request as the upstream would see it, after earlier steps', async () => {
    const before = up.requests.length;
    const res = await get('/echo/x?y=1');
    assert.equal(res.status, 200);
    assert.equal(res.json.path, '/echo/x');
    assert.equal(res.json.query, 'y=1');
    assert.ok(res.json.headers.some(([k, v]: [string, string]) => k === 'x-step' && v === '1'));
    assert.equal(up.requests.length, before, 'echo does not reach the upstream');
  });

  await t.test('ip-restriction: deny and allow lists on the socket peer; X-Forwarded-For only from trusted proxies', async () => {
    assert.equal((await get('/ipdeny')).status, 403);
    assert.equal((await get('/ipdeny', { headers: { 'x-forwarded-for': '8.8.8.8' } })).status, 403, 'a spoofed XFF does not help');
    assert.equal((await get('/ipallow')).status, 200);
    assert.equal((await get('/ipproxy', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status, 403, 'the trusted proxy reports a denied client');
    assert.equal((await get('/ipproxy', { headers: { 'x-forwarded-for': '198.51.100.1' } })).status, 200);
  });

  await t.test('ip-restriction: every X-Forwarded-For line counts, ports are ignored, an unreadable hop ends the walk; v4-mapped IPv6 blocks match', async () => {
    // Regressions: only the first XFF line was read, so a client-written first line decided
    // when the trusted proxy appended a line of its own; a hop with a port matched no deny
    // entry; a ::ffff: block never matched the dotted peer.
    const raw = async (path: string, lines: string[]) => (await rawRequest(gw.dataPort, [`GET ${path} HTTP/1.1`, 'Host: x', 'Connection: close', ...lines])).status;
    assert.equal(await raw('/ipproxy', ['X-Forwarded-For: 198.51.100.1', 'X-Forwarded-For: 203.0.113.7']), 403, 'the proxy’s own line names a denied client');
    assert.equal(await raw('/ipproxyallow', ['X-Forwarded-For: 10.1.2.3', 'X-Forwarded-For: 198.51.100.9']), 403, 'a client-written allowed address does not help');
    assert.equal(await raw('/ipproxyallow', ['X-Forwarded-For: 198.51.100.9, 10.1.2.3']), 200);
    assert.equal(await raw('/ipproxy', ['X-Forwarded-For: 203.0.113.7:4711']), 403, 'a port does not hide the address');
    assert.equal(await raw('/ipproxy', ['X-Forwarded-For: [2001:db8::1]:443']), 200);
    // An unreadable hop ends the walk: the client is the address to its right (here the peer).
    assert.equal(await raw('/ipproxy', ['X-Forwarded-For: not-an-address']), 200, 'the peer, not denied');
    assert.equal(await raw('/ipproxyallow', ['X-Forwarded-For: 10.1.2.3, not-an-address']), 403, 'never past it to a client-written allowed address');
    assert.equal(await raw('/ipmapped', []), 403, 'a ::ffff: block matches the IPv4 peer');
  });

  await t.test('bot-detection: a denied user agent gets 403', async () => {
    assert.equal((await get('/bot', { headers: { 'user-agent': 'EvilBot/1.0' } })).status, 403);
    assert.equal((await get('/bot', { headers: { 'user-agent': 'Mozilla/5.0' } })).status, 200);
  });

  await t.test('cors: preflight answered at the gateway; allowed origins get CORS headers, others do not', async () => {
    const before = up.requests.length;
    const pre = await get('/cors', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT' } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], 'https://app.example');
    assert.equal(pre.headers['access-control-allow-credentials'], 'true');
    assert.match(String(pre.headers['access-control-allow-methods']), /PUT/);
    assert.equal(up.requests.length, before, 'the preflight never reaches the upstream');
    const denied = await get('/cors', { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'PUT' } });
    assert.equal(denied.status, 403);
    const simple = await get('/cors', { headers: { origin: 'https://app.example' } });
    assert.equal(simple.headers['access-control-allow-origin'], 'https://app.example');
    const other = await get('/cors', { headers: { origin: 'https://evil.example' } });
    assert.equal(other.status, 200);
    assert.equal(other.headers['access-control-allow-origin'], undefined);
  });

  await t.test('key-auth: 401 without a valid key; the consumer id goes upstream, the key does not', async () => {
    const none = await get('/key');
    assert.equal(none.status, 401);
    assert.equal(none.json.code, 'Svc.Data.Unauthenticated');
    assert.equal((await get('/key', { headers: { 'x-api-key': 'wrong' } })).status, 401);
    const ok = await get('/key', { headers: { 'x-api-key': 'alice-key' } });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.headers['x-consumer-id'], 'alice');
    assert.equal(ok.json.headers['x-api-key'], undefined);
    assert.equal((await get('/key?apikey=alice-key')).status, 200);
    // Regression: a key given in the query reached the upstream in its URL.
    const q = await get('/key/items?page=1&apikey=alice-key&sort=a');
    assert.equal(q.status, 200);
    assert.equal(q.json.url, '/key/items?page=1&sort=a', 'the key leaves the query; the other parameters keep their bytes');
    assert.equal((await get('/key?apikey=alice-key')).json.url, '/key');
  });

  await t.test('fault-injection: a 100% abort answers the configured status; a 100% delay holds the request', async () => {
    const res = await get('/fault');
    assert.equal(res.status, 418);
    assert.equal(res.text, 'teapot');
    const t0 = Date.now();
    const delayed = await get('/delay');
    assert.equal(delayed.status, 200);
    assert.ok(Date.now() - t0 >= 390, `answered after ${Date.now() - t0} ms`);
  });

  await t.test('request-size-limit: a body over maxBytes gets 413, a small one passes; chunked bodies are counted as they stream', async () => {
    assert.equal((await get('/size', { method: 'POST', body: 'x'.repeat(11) })).status, 413);
    assert.equal((await get('/size', { method: 'POST', body: 'x'.repeat(10) })).status, 200);
    const chunked = (parts: string[]) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${gw.dataUrl}/size`, { method: 'POST', agent: false, headers: { 'transfer-encoding': 'chunked' } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
        for (const p of parts) req.write(p);
        req.end();
      });
    assert.equal(await chunked(['x'.repeat(6), 'y'.repeat(6)]), 413);
    assert.equal(await chunked(['x'.repeat(4), 'y'.repeat(4)]), 200);
  });

  await t.test('bad settings are compile issues with a pointer', async () => {
    await setEntity(gw, 'route', 'bad', { cluster: 'up', pathPrefix: '/bad', steps: [{ code: 'ip-restriction', settings: { deny: ['300.1.1.1'] } }, { code: 'cors', settings: { origins: [] } }] });
    const d = await dryRun(gw);
    assert.equal(d.status, 422);
    const pointers = d.json.issues.map((i) => i.pointer).sort();
    assert.deepEqual(pointers, ['/steps/0/settings/deny/0', '/steps/1/settings/origins']);
    // Regression: weights past 2^32 passed, and sticky clients then all went to the first cluster.
    await setEntity(gw, 'route', 'bad', { cluster: 'up', pathPrefix: '/bad', steps: [{ code: 'traffic-split', settings: { clusters: [{ cluster: 'up', weight: 5e9 }, { cluster: 'up', weight: 1 }] } }] });
    const heavy = await dryRun(gw);
    assert.equal(heavy.status, 422);
    assert.deepEqual(heavy.json.issues.map((i) => i.pointer), ['/steps/0/settings/clusters/0/weight']);
  });

  await t.test('header edits may not set framing or hop-by-hop headers, nor values with control characters', async () => {
    // Regressions: response-headers `set content-length` sent two lengths, `set
    // transfer-encoding` a message no client could parse; request-headers with such a
    // value made every request of the route fail with 400, blaming the client.
    await setEntity(gw, 'route', 'bad', { cluster: 'up', pathPrefix: '/bad', steps: [
      { code: 'response-headers', settings: { set: { 'Content-Length': '5' }, add: { 'transfer-encoding': 'chunked' } } },
      { code: 'request-headers', settings: { set: { connection: 'close', 'x-ok': 'a\u0001b' } } },
    ] });
    const d = await dryRun(gw);
    assert.equal(d.status, 422);
    const pointers = d.json.issues.map((i) => i.pointer).sort();
    assert.deepEqual(pointers, ['/steps/0/settings/add/transfer-encoding', '/steps/0/settings/set/Content-Length', '/steps/1/settings/set/connection', '/steps/1/settings/set/x-ok']);
    await setEntity(gw, 'route', 'bad', { cluster: 'up', pathPrefix: '/bad', steps: [{ code: 'response-headers', settings: { remove: ['content-length', 'connection'], set: { 'x-tab': 'a\tb' } } }] });
    assert.equal((await dryRun(gw)).status, 200, 'removing them, and a tab in a value, are fine');
  });
});
