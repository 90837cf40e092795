import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, publish, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { rawRequest } from './helpers/raw-http.js';
import { runCli } from './helpers/cli.js';
import { BOUNDED } from './helpers/wait.js';

/** Each route answers by itself and names itself in `x-route`, so the data port says which one served. */
const ROUTES: [string, Record<string, unknown>][] = [
  ['root', { pathPrefix: '/' }],
  ['api', { pathPrefix: '/api' }],
  ['api-v1', { pathPrefix: '/api/v1' }],
  ['admin-high', { pathPrefix: '/api/admin', order: 5 }],
  ['admin-x-low', { pathPrefix: '/api/admin/x' }],
  ['api-on-host', { pathPrefix: '/api', hosts: ['h.example'] }],
  ['host-only', { pathPrefix: '/only', hosts: ['h.example'] }],
  ['wild', { pathPrefix: '/w', hosts: ['*.w.example'] }],
  ['m-get', { pathPrefix: '/m', methods: ['GET'] }],
  ['m-post', { pathPrefix: '/m', methods: ['POST'] }],
  ['any-case', { pathPrefix: '/Case', caseSensitive: false }],
];

/** [method, path as sent, Host]. */
const REQUESTS: [string, string, string][] = [
  ['GET', '/', 'gw.test'],
  ['GET', '/api', 'gw.test'],
  ['GET', '/api/v1/x', 'gw.test'],
  ['GET', '/api/admin', 'gw.test'],
  ['GET', '/api/admin/x/y', 'gw.test'],
  ['GET', '/api/v1/../admin', 'gw.test'],
  ['GET', '/api/./v1', 'gw.test'],
  ['GET', '/api', 'h.example'],
  ['GET', '/only/1', 'h.example'],
  ['GET', '/only/1', 'gw.test'],
  ['GET', '/w/1', 'a.w.example'],
  ['GET', '/w/1', 'w.example'],
  ['GET', '/w', 'b.a.w.example'],
  ['GET', '/m', 'gw.test'],
  ['POST', '/m', 'gw.test'],
  ['DELETE', '/m', 'gw.test'],
  ['GET', '/CASE/x', 'gw.test'],
  ['GET', '/apix', 'gw.test'],
  ['GET', '//api//v1', 'gw.test'],
  ['GET', '/api/v1%2Fx', 'gw.test'],
];

test('explain names the route the data port serves, for 20 requests: order, prefix ties, hosts, wildcard hosts, methods, case, dot segments', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  for (const [name, doc] of ROUTES) await setEntity(gw, 'route', name, { ...doc, directResponse: { statusCode: 200, body: name, headers: { 'x-route': name } } });
  await publish(gw);
  const rows: string[] = [];
  for (const [method, path, host] of REQUESTS) {
    const e = await request(`${gw.adminUrl}/api/v1/default/explain`, { method: 'POST', token: gw.tokens.root, body: { method, url: `http://${host}${path}` } });
    assert.equal(e.status, 200, e.text);
    const explained = (e.json.route?.name as string | undefined) ?? null;
    const real = await rawRequest(gw.dataPort, [`${method} ${path} HTTP/1.1`, `Host: ${host}`, 'Content-Length: 0', 'Connection: close']);
    const served = real.headers['x-route'] ?? null;
    rows.push(`${method} ${host}${path}: explain ${explained}, data port ${served} (${real.status})`);
    assert.equal(explained, served, `${method} ${host}${path}: explain says ${explained}, the data port served ${served} (${real.status}); candidates ${JSON.stringify(e.json.candidates)}`);
    if (explained === null) assert.ok(e.json.refused, 'a request no route takes says why');
  }
  t.diagnostic(rows.join('\n'));
  // The losers say why they lost.
  const why = await request(`${gw.adminUrl}/api/v1/default/explain`, { method: 'POST', token: gw.tokens.root, body: { method: 'GET', url: 'http://gw.test/api/admin/x' } });
  const outcomes = Object.fromEntries((why.json.candidates as { route: string; outcome: string }[]).map((c) => [c.route, c.outcome]));
  assert.deepEqual(outcomes, {
    'admin-high': 'wins',
    'admin-x-low': 'outranked',
    'api-v1': 'path',
    api: 'outranked',
    'api-on-host': 'host',
    'host-only': 'path',
    'any-case': 'path',
    'm-get': 'path',
    'm-post': 'path',
    root: 'outranked',
    wild: 'path',
  });
});

test("explain --draft reads the drafts; a tenant's key never sees another tenant's routes", BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await setEntity(gw, 'route', 'later', { pathPrefix: '/later', directResponse: { statusCode: 200 } });
  await setEntity(gw, 'route', 'acme-home', { pathPrefix: '/', hosts: ['acme.example'], directResponse: { statusCode: 200 } }, 'acme');
  await publish(gw, 'acme');
  const env = { SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: gw.tokens.root };
  const published = await runCli(['explain', 'GET', '/later'], { env });
  assert.equal(published.code, 0, published.stderr);
  assert.match((published.json as { refused: string }).refused, /no route matches/, 'the draft route is not published yet');
  const draft = await runCli(['explain', 'GET', '/later', '--draft'], { env });
  assert.equal((draft.json as { route: { name: string } }).route.name, 'later');
  const foreign = await runCli(['explain', 'GET', 'http://acme.example/'], { env });
  const body = foreign.json as { route: unknown; candidates: unknown[]; refused: string };
  assert.equal(body.route, null);
  assert.deepEqual(body.candidates, []);
  assert.match(body.refused, /belongs to another tenant/);
});
