import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { rawRequest } from './helpers/raw-http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, setEntityRaw } from './helpers/admin.js';
import { BOUNDED } from './helpers/wait.js';

/** The head as received: the status line, then one entry per header line. */
function headLines(raw: string): string[] {
  const end = raw.indexOf('\r\n\r\n');
  assert.ok(end > 0, `no end of head in ${JSON.stringify(raw.slice(0, 300))}`);
  return raw.slice(0, end).split('\r\n');
}

function assertWellFormed(lines: string[], what: string): void {
  for (const l of lines.slice(1)) assert.match(l, /^[A-Za-z0-9-]+: [^\r\n]*$/, `${what}: a malformed header line ${JSON.stringify(l)}`);
  const lengths = lines.filter((l) => /^content-length:/i.test(l));
  assert.equal(lengths.length, 1, `${what}: exactly one Content-Length, got ${JSON.stringify(lengths)}`);
}

// The worker writes a response head in one uWS call (status line and header lines
// joined): these check the bytes on the wire, line by line, for each kind of head.
test('response heads reach the client one header per line, repeated names kept, in order', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'echo', { targets: [up.target] }],
    ['route', 'plain', { cluster: 'echo', pathPrefix: '/plain' }],
    [
      'route',
      'stepped',
      {
        cluster: 'echo',
        pathPrefix: '/stepped',
        steps: [
          { code: 'request-id', settings: {} },
          { code: 'cors', settings: { origins: ['https://app.example'] } },
          { code: 'rate-limit', settings: { requestsPerSecond: 1000, burst: 1000 } },
          { code: 'response-headers', settings: { set: { 'x-edited': 'yes' } } },
        ],
      },
    ],
    ['route', 'fixed', { pathPrefix: '/fixed', directResponse: { statusCode: 203, body: 'fixed body', headers: { 'x-one': '1', 'x-two': 'two words', 'content-type': 'text/plain' } } }],
    ['route', 'moved', { pathPrefix: '/moved', redirect: { location: 'https://elsewhere.example/x?y=1', statusCode: 308 } }],
  ]);

  const extra = JSON.stringify({ 'set-cookie': ['a=1; Path=/', 'b=2; HttpOnly'], 'x-first': 'f', 'x-last': 'l' });
  const plain = await rawRequest(gw.dataPort, ['GET /plain HTTP/1.1', 'Host: gw.example', `X-Up-Headers: ${extra}`, 'Connection: close']);
  const p = headLines(plain.raw);
  assert.equal(p[0], 'HTTP/1.1 200 OK');
  assertWellFormed(p, 'proxied');
  assert.deepEqual(p.filter((l) => l.startsWith('set-cookie: ')), ['set-cookie: a=1; Path=/', 'set-cookie: b=2; HttpOnly']);
  assert.ok(p.indexOf('x-first: f') > 0 && p.indexOf('x-first: f') < p.indexOf('x-last: l'), `upstream order kept: ${p.join(' | ')}`);
  assert.equal(plain.json.url, '/plain');

  const stepped = await rawRequest(gw.dataPort, ['GET /stepped HTTP/1.1', 'Host: gw.example', 'Origin: https://app.example', 'Connection: close']);
  const s = headLines(stepped.raw);
  assert.equal(s[0], 'HTTP/1.1 200 OK');
  assertWellFormed(s, 'stepped');
  const names = s.slice(1).map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
  for (const n of ['x-request-id', 'access-control-allow-origin', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-edited', 'content-type']) {
    assert.equal(names.filter((x) => x === n).length, 1, `stepped: one ${n} line in ${s.join(' | ')}`);
  }
  assert.ok(s.includes('access-control-allow-origin: https://app.example'));
  assert.ok(s.includes('x-edited: yes'));

  const fixed = await rawRequest(gw.dataPort, ['GET /fixed HTTP/1.1', 'Host: gw.example', 'Connection: close']);
  const f = headLines(fixed.raw);
  assert.equal(f[0], 'HTTP/1.1 203 Non-Authoritative Information');
  assertWellFormed(f, 'directResponse');
  assert.deepEqual(
    f.filter((l) => l.startsWith('x-') || l.startsWith('content-type')).map((l) => l.replace(/^(x-request-id: ).*/, '$1<id>')),
    ['x-one: 1', 'x-two: two words', 'content-type: text/plain', 'x-request-id: <id>'],
    'the configured headers in order, then the request id',
  );
  assert.equal(fixed.text, 'fixed body');

  const moved = await rawRequest(gw.dataPort, ['GET /moved HTTP/1.1', 'Host: gw.example', 'Connection: close']);
  const m = headLines(moved.raw);
  assert.equal(m[0], 'HTTP/1.1 308 Permanent Redirect');
  assertWellFormed(m, 'redirect');
  assert.ok(m.includes('location: https://elsewhere.example/x?y=1'));

  const missing = await rawRequest(gw.dataPort, ['GET /nothing-here HTTP/1.1', 'Host: other.example', 'Connection: close']);
  assertWellFormed(headLines(missing.raw), '404 envelope');
});

// Regression: directResponse header values and redirect locations took any string, so
// a CR LF in one would have split the response on the wire (the data plane writes
// configured values as they are).
test('CR, LF and NUL in configured response header values are refused at the admin edge', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const cases: [string, unknown, string][] = [
    ['split-header', { directResponse: { statusCode: 200, headers: { 'x-a': 'ok\r\nset-cookie: evil=1' } } }, '/directResponse/headers/x-a'],
    ['split-location', { redirect: { location: '/next\r\nset-cookie: evil=1' } }, '/redirect/location'],
    ['nul-header', { directResponse: { statusCode: 200, headers: { 'x-a': 'a\0b' } } }, '/directResponse/headers/x-a'],
  ];
  for (const [name, doc, pointer] of cases) {
    const r = await setEntityRaw(gw, 'route', name, doc);
    assert.equal(r.status, 400, `${name}: ${r.text}`);
    const body = r.json as { code: string; details?: unknown };
    assert.equal(body.code, 'Svc.Config.Invalid');
    assert.ok(JSON.stringify(body).includes(pointer), `${name}: the error names ${pointer}: ${r.text}`);
  }
});
