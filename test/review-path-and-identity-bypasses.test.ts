import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { rawRequest } from './helpers/raw-http.js';
import { ROOT_KEY, apply } from './helpers/admin.js';

// Each an attack that got past a keyed route or the identity-header drop, found by review.

const KEY_AUTH = { code: 'key-auth', settings: { header: 'x-api-key', keys: [{ id: 'k', sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' }] } };

test('a path-rewrite result goes upstream in normal form: /api -> / never makes a // that WHATWG parsers read as a host', { timeout: 60_000 }, async (t) => {
  const srv = createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', `http://${req.headers.host}`);
    res.end(`${pathname.startsWith('/admin-api') ? 'admin' : 'public'} ${req.url} ${pathname}`);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => { srv.closeAllConnections(); srv.close(); });
  const target = `127.0.0.1:${(srv.address() as { port: number }).port}`;
  const rewrite = { code: 'path-rewrite', settings: { replacePrefix: { from: '/api', to: '/' } } };
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'c', { targets: [target] }],
    ['route', 'api-admin', { cluster: 'c', pathPrefix: '/api/admin-api', order: 10, steps: [KEY_AUTH, rewrite] }],
    ['route', 'api', { cluster: 'c', pathPrefix: '/api', steps: [rewrite] }],
  ]);
  const keyless = await rawRequest(gw.dataPort, ['GET /api/admin-api HTTP/1.1', 'Host: a.test', 'Connection: close']);
  assert.equal(keyless.status, 401);
  const r = await rawRequest(gw.dataPort, ['GET /api/x/admin-api HTTP/1.1', 'Host: a.test', 'Connection: close']);
  t.diagnostic(`/api/x/admin-api -> ${r.status} ${r.text}`);
  assert.doesNotMatch(r.text, /^admin /, 'the admin handler answered a request without the key');
  assert.match(r.text, /^public \/x\/admin-api /, 'the upstream got the merged path');
});

test('mergeSlashes false still merges a leading //: //x/admin-api never reaches a WHATWG-URL upstream as host x', { timeout: 60_000 }, async (t) => {
  const srv = createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', `http://${req.headers.host}`); // as nodejs.org/api/http.html shows
    res.end(`${pathname.startsWith('/admin-api') ? 'admin' : 'public'} ${req.url} ${pathname}`);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => { srv.closeAllConnections(); srv.close(); });
  const target = `127.0.0.1:${(srv.address() as { port: number }).port}`;
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: (c) => (c.paths = { escapedSlashes: 'reject', mergeSlashes: false }) });
  await apply(gw, [
    ['cluster', 'c', { targets: [target] }],
    ['route', 'admin', { cluster: 'c', pathPrefix: '/admin-api', order: 10, steps: [KEY_AUTH] }],
    ['route', 'all', { cluster: 'c' }],
  ]);
  const keyless = await rawRequest(gw.dataPort, ['GET /admin-api HTTP/1.1', 'Host: a.test', 'Connection: close']);
  assert.equal(keyless.status, 401);
  const r = await rawRequest(gw.dataPort, ['GET //x/admin-api HTTP/1.1', 'Host: a.test', 'Connection: close']);
  t.diagnostic(`//x/admin-api -> ${r.status} ${r.text}`);
  assert.doesNotMatch(r.text, /^admin /, 'the admin handler answered a request without the key');
  assert.match(r.text, /^public \/x\/admin-api /);
});

const PROBES = [
  'X-Forwarded-For: 6.6.6.6',
  'Client-IP: 6.6.6.6',
  'X-Cluster-Client-IP: 6.6.6.6',
  'CF-Connecting-IP: 6.6.6.6',
  'Fastly-Client-IP: 6.6.6.6',
  'X-Original-Forwarded-For: 6.6.6.6',
  'X-Forwarded: for=6.6.6.6',
  'Forwarded-For: 6.6.6.6',
  'X-Forwarded-Prefix: /admin-api',
  'X-Forwarded-Scheme: https',
  'X-Forwarded-Ssl: on',
  'X-Original-URL: /admin-api',
  'X-Rewrite-URL: /admin-api',
  'X-Original-Host: admin.test',
  'X-Host: admin.test',
  'X-Forwarded-Server: admin.test',
];

test('the wider family of identity, scheme and URL-override headers from an untrusted peer never reaches the upstream', { timeout: 60_000 }, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [['cluster', 'c', { targets: [up.target] }], ['route', 'all', { cluster: 'c' }]]);
  const leaked: string[] = [];
  for (const p of PROBES) {
    up.requests.length = 0;
    const r = await rawRequest(gw.dataPort, ['GET /x HTTP/1.1', 'Host: a.test', p, 'Connection: close']);
    assert.equal(r.status, 200, p);
    const got = up.requests[0]!.rawHeaders;
    const name = p.slice(0, p.indexOf(':')).toLowerCase();
    for (let i = 0; i < got.length; i += 2) {
      if (got[i]!.toLowerCase() === name && got[i + 1] !== '127.0.0.1' && got[i + 1] !== 'http' && got[i + 1] !== 'a.test') leaked.push(`${got[i]}: ${got[i + 1]}`);
    }
  }
  t.diagnostic(`reached the upstream: ${JSON.stringify(leaked)}`);
  assert.deepEqual(leaked, [], 'identity-like headers reached the upstream');
});

test('header names with an underscore never reach the upstream: X_Forwarded_For would read as X-Forwarded-For in a CGI-style upstream', { timeout: 60_000 }, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [['cluster', 'c', { targets: [up.target] }], ['route', 'all', { cluster: 'c' }]]);
  const r = await rawRequest(gw.dataPort, ['GET /x HTTP/1.1', 'Host: a.test', 'X_Forwarded_For: 6.6.6.6', 'Client_IP: 6.6.6.6', 'X-Kept: yes', 'Connection: close']);
  assert.equal(r.status, 200);
  const names = up.requests[0]!.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
  assert.ok(names.includes('x-kept'), 'an ordinary header is forwarded');
  assert.deepEqual(names.filter((n) => n.includes('_')), [], 'an underscore name reached the upstream');
});
