import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';
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

/** Three upstreams that say which one answered and the path they received. */
async function namedUpstreams(t: { after(fn: () => void): void }, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const srv = createServer((req, res) => res.end(`${req.url}`));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    t.after(() => srv.close());
    const target = `127.0.0.1:${(srv.address() as { port: number }).port}`;
    srv.prependListener('request', (_req, res) => res.setHeader('x-target', target));
    out.push(target);
  }
  return out;
}

test('explain runs the steps the request alone decides, and names the target and path the upstream gets; the data port agrees', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const targets = await namedUpstreams(t, 3);
  await setEntity(gw, 'cluster', 'users', { targets, balance: 'hash', hashOn: { header: 'x-user' } });
  const key = 'k-secret-1';
  await setEntity(gw, 'route', 'users', {
    pathPrefix: '/users',
    cluster: 'users',
    steps: [
      { code: 'ip-restriction', settings: { deny: ['10.0.0.0/8'] } },
      { code: 'key-auth', settings: { keys: [{ id: 'app', sha256: createHash('sha256').update(key).digest('hex') }] } },
      { code: 'rate-limit', settings: { requestsPerSecond: 1000, burst: 1000 } },
      { code: 'method-restriction', settings: { allow: ['GET', 'POST'] } },
      { code: 'request-size-limit', settings: { maxBytes: 100 } },
      { code: 'path-rewrite', settings: { replacePrefix: { from: '/users', to: '/v2/people' } } },
    ],
  });
  // Keyed by a query parameter, hashed on another: explain reads the query with the data port's parser.
  await setEntity(gw, 'cluster', 'by-tenant', { targets, balance: 'hash', hashOn: { query: 'tenant' } });
  await setEntity(gw, 'route', 'by-tenant', { pathPrefix: '/by-tenant', cluster: 'by-tenant', steps: [{ code: 'key-auth', settings: { query: 'api_key', keys: [{ id: 'app', sha256: createHash('sha256').update(key).digest('hex') }] } }] });
  await publish(gw);
  const explain = async (method: string, path: string, headers: Record<string, string>, clientAddress?: string) => {
    const e = await request(`${gw.adminUrl}/api/v1/default/explain`, { method: 'POST', token: gw.tokens.root, body: { method, url: `http://gw.test${path}`, headers, ...(clientAddress ? { clientAddress } : {}) } });
    assert.equal(e.status, 200, e.text);
    return e.json as { route: { terminal: { steps: { code: string; verdict: string; status?: number; error?: string }[] } }; upstream: { target: string | null; path: string; query: string | null } | null };
  };
  const refusal = (body: Awaited<ReturnType<typeof explain>>) => body.route.terminal.steps.find((s) => s.verdict === 'refuses') ?? null;

  // Each refusal explain predicts is the one the data port gives.
  const cases: [string, string, Record<string, string>, number, string][] = [
    ['GET', '/users/1', {}, 401, 'key-auth'],
    ['GET', '/users/1', { 'x-api-key': 'wrong' }, 401, 'key-auth'],
    ['DELETE', '/users/1', { 'x-api-key': key }, 405, 'method-restriction'],
    ['POST', '/users/1', { 'x-api-key': key, 'content-length': '101' }, 413, 'request-size-limit'],
  ];
  for (const [method, path, headers, status, code] of cases) {
    const body = await explain(method, path, headers);
    const r = refusal(body);
    assert.equal(r?.code, code, `${method} ${path} ${JSON.stringify(headers)}: ${JSON.stringify(body.route.terminal.steps)}`);
    assert.equal(r?.status, status);
    assert.equal(body.upstream, null, 'a refused request reaches no upstream');
    const after = body.route.terminal.steps.slice(body.route.terminal.steps.indexOf(r!) + 1);
    assert.ok(after.every((s) => s.verdict === 'not reached'), 'the steps after a refusal are not reached');
    const extra = method === 'POST' ? { 'content-type': 'text/plain' } : {};
    const real = await request(`${gw.dataUrl}${path}`, { method, headers: { ...headers, ...extra }, body: method === 'POST' ? 'x'.repeat(101) : undefined });
    assert.equal(real.status, status, `the data port answers ${method} ${path} with ${real.status}`);
  }
  const denied = await explain('GET', '/users/1', { 'x-api-key': key }, '10.1.2.3');
  assert.deepEqual([refusal(denied)?.code, refusal(denied)?.status, refusal(denied)?.error], ['ip-restriction', 403, 'Svc.Data.IpDenied']);
  const unknown = await explain('GET', '/users/1', { 'x-api-key': key });
  assert.equal(unknown.route.terminal.steps[0]!.verdict, 'at run time', 'without a client address ip-restriction is not guessed');
  assert.equal(unknown.route.terminal.steps[2]!.verdict, 'at run time', 'rate-limit depends on traffic');

  // Passing requests: the hashed target and the rewritten path are the ones the upstream sees.
  const seen = new Set<string>();
  for (const user of ['ann', 'bob', 'cy', 'dee', 'eve', 'fay', 'gus', 'hal']) {
    const body = await explain('GET', '/users/a/../42?x=1', { 'x-api-key': key, 'x-user': user }, '127.0.0.1');
    assert.equal(refusal(body), null, JSON.stringify(body.route.terminal.steps));
    assert.equal(body.upstream?.path, '/v2/people/42');
    const real = await request(`${gw.dataUrl}/users/42?x=1`, { headers: { 'x-api-key': key, 'x-user': user } });
    assert.equal(real.status, 200, real.text);
    assert.equal(real.text, `${body.upstream.path}?${body.upstream.query}`, 'the upstream received the path explain predicted');
    assert.equal(real.headers['x-target'], body.upstream.target, `user ${user}: explain picked ${body.upstream.target}`);
    seen.add(body.upstream.target!);
  }
  assert.ok(seen.size >= 2, `eight keys spread over the targets (${[...seen].join(', ')})`);
  // A key that comes twice, one of them encoded: explain refuses it as the data port does.
  const twice = await explain('GET', `/by-tenant?api_key=${key}&api%5Fkey=other`, {});
  assert.deepEqual([refusal(twice)?.code, refusal(twice)?.status, refusal(twice)?.error], ['key-auth', 400, 'Svc.Data.AmbiguousCredential']);
  assert.equal((await request(`${gw.dataUrl}/by-tenant?api_key=${key}&api%5Fkey=other`)).status, 400);
  const tenants = new Set<string>();
  for (const tenant of ['t1', 't2', 't3', 't4', 't5', 't6']) {
    const query = `%74enant=${tenant}&api%5Fkey=${key}&tenant=other`;
    const body = await explain('GET', `/by-tenant?${query}`, {});
    assert.equal(refusal(body), null, JSON.stringify(body.route.terminal.steps));
    assert.equal(body.upstream?.query, `%74enant=${tenant}&tenant=other`, 'the key leaves the query, the other pairs keep their bytes');
    const real = await request(`${gw.dataUrl}/by-tenant?${query}`);
    assert.equal(real.text, `/by-tenant?${body.upstream.query}`);
    assert.equal(real.headers['x-target'], body.upstream.target, `tenant ${tenant}: hashed on the decoded name's first value`);
    tenants.add(body.upstream.target!);
  }
  assert.ok(tenants.size >= 2, `six tenants spread over the targets (${[...tenants].join(', ')})`);
  const cli = await runCli(['explain', 'GET', 'http://gw.test/users/1'], { env: { SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: gw.tokens.root } });
  assert.equal(cli.code, 0, cli.stderr);
});
