import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes, scryptSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

/**
 * Steps that set identity headers for the upstream (jwt-auth, forward-auth, http-callout,
 * basic-auth) own those headers: the upstream sees their value or none, never one the
 * client wrote. Regressions: each of them let a client's own X-Consumer-Id / X-User-Id /
 * X-Tier through when the token, the auth service or the callout did not supply one.
 */
test('identity headers come from the step that owns them, never from the client', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  // The service the auth steps call: what it answers depends on the path.
  const service = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path.startsWith('/no-user')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    else if (path.startsWith('/deny')) res.writeHead(401, { 'www-authenticate': 'Bearer realm="idp"', 'set-cookie': ['attempt=1', 'seen=yes'], 'content-type': 'text/plain' }).end('who are you');
    else if (path.startsWith('/login')) res.writeHead(302, { location: 'https://idp.example/login' }).end();
    else if (path.startsWith('/bad-value')) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tier: 'gold\r\nx-injected: 1' }));
    else if (path.startsWith('/drip')) {
      // Answers its head at once, then one body byte every 200 ms for 4 s.
      res.writeHead(200, { 'content-type': 'application/json', 'x-user-id': 'slow' });
      let n = 0;
      const timer = setInterval(() => {
        if (++n === 20) {
          clearInterval(timer);
          res.end('}');
        } else res.write(n === 1 ? '{' : ' ');
      }, 200);
      res.on('close', () => clearInterval(timer));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => service.close(r)));
  const svc = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;

  const secret = randomBytes(32).toString('hex');
  const sha = (key: string) => createHash('sha256').update(key).digest('hex');
  const salt = randomBytes(16);
  const zoe = `scrypt$1024$8$1$${salt.toString('base64')}$${scryptSync('pw', salt, 32, { N: 1024, r: 8, p: 1 }).toString('base64')}`;
  const gw = await startGateway(t, { keys: [ROOT_KEY], env: { SY_TEST_JWT_SECRET: secret }, edit: (c) => (c.secrets = { env: { default: ['SY_TEST_JWT_SECRET'] } }) });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'jwt', { cluster: 'up', pathPrefix: '/jwt', steps: [{ code: 'jwt-auth', settings: { algorithms: ['HS256'], secretEnv: 'SY_TEST_JWT_SECRET' } }] }],
    ['route', 'fa', { cluster: 'up', pathPrefix: '/fa', steps: [{ code: 'forward-auth', settings: { url: `${svc}/no-user`, upstreamHeaders: ['x-user-id'] } }] }],
    ['route', 'fa-deny', { cluster: 'up', pathPrefix: '/fa-deny', steps: [{ code: 'forward-auth', settings: { url: `${svc}/deny` } }] }],
    ['route', 'fa-login', { cluster: 'up', pathPrefix: '/fa-login', steps: [{ code: 'forward-auth', settings: { url: `${svc}/login` } }] }],
    ['route', 'fa-drip', { cluster: 'up', pathPrefix: '/fa-drip', steps: [{ code: 'forward-auth', settings: { url: `${svc}/drip`, timeoutMs: 500 } }] }],
    ['route', 'co', { cluster: 'up', pathPrefix: '/co', steps: [{ code: 'http-callout', settings: { url: `${svc}/no-user`, map: { 'x-tier': '/tier' } } }] }],
    ['route', 'co-bad', { cluster: 'up', pathPrefix: '/co-bad', steps: [{ code: 'http-callout', settings: { url: `${svc}/bad-value`, map: { 'x-tier': '/tier' } } }] }],
    ['route', 'co-bad-opt', { cluster: 'up', pathPrefix: '/co-opt', steps: [{ code: 'http-callout', settings: { url: `${svc}/bad-value`, map: { 'x-tier': '/tier' }, optional: true } }] }],
    ['route', 'basic', { cluster: 'up', pathPrefix: '/basic', steps: [{ code: 'basic-auth', settings: { realm: 'r', users: [{ username: 'zoë', scrypt: zoe }] } }] }],
    // "Optional auth": failing checks that let the request on (Continue, an `any` group).
    ['orch', 'optional-key', { nodes: [{ id: 'k', step: 'key-auth', settings: { keys: [{ id: 'app', sha256: sha('good-key') }] }, failureStrategy: 'Continue' }], links: [] }],
    ['orch', 'optional-jwt', { nodes: [{ id: 'j', step: 'jwt-auth', settings: { algorithms: ['HS256'], secretEnv: 'SY_TEST_JWT_SECRET' }, failureStrategy: 'Continue' }], links: [] }],
    ['orch', 'optional-fa', { nodes: [{ id: 'f', step: 'forward-auth', settings: { url: `${svc}/deny`, upstreamHeaders: ['x-user-id'] }, failureStrategy: 'Continue' }], links: [] }],
    ['orch', 'any-of', {
      nodes: [
        { id: 'k', step: 'key-auth', settings: { keys: [{ id: 'app', sha256: sha('good-key') }], consumerHeader: 'x-key-consumer' } },
        { id: 'j', step: 'jwt-auth', settings: { algorithms: ['HS256'], secretEnv: 'SY_TEST_JWT_SECRET' } },
      ],
      links: [],
      groups: [{ id: 'g', nodes: ['k', 'j'], merge: 'any' }],
    }],
    ['route', 'opt-key', { cluster: 'up', pathPrefix: '/opt-key', steps: [{ code: 'orch', settings: { ref: 'optional-key' } }] }],
    ['route', 'opt-jwt', { cluster: 'up', pathPrefix: '/opt-jwt', steps: [{ code: 'orch', settings: { ref: 'optional-jwt' } }] }],
    ['route', 'opt-fa', { cluster: 'up', pathPrefix: '/opt-fa', steps: [{ code: 'orch', settings: { ref: 'optional-fa' } }] }],
    ['route', 'any-of', { cluster: 'up', pathPrefix: '/any-of', steps: [{ code: 'orch', settings: { ref: 'any-of' } }] }],
  ]);
  const get = (path: string, headers: Record<string, string> = {}) => request(`${gw.dataUrl}${path}`, { headers });

  await t.test('jwt-auth: a valid token without sub does not let the client name the consumer', async () => {
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(Buffer.from(secret));
    const r = await get('/jwt', { authorization: `Bearer ${token}`, 'x-consumer-id': 'admin' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.headers['x-consumer-id'], undefined);
  });

  await t.test('forward-auth: a header the service did not return is dropped; refusals keep their headers', async () => {
    const r = await get('/fa', { 'x-user-id': 'admin' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.headers['x-user-id'], undefined);
    const denied = await get('/fa-deny');
    assert.equal(denied.status, 401);
    assert.equal(denied.headers['www-authenticate'], 'Bearer realm="idp"', 'RFC 9110 §15.5.2: a 401 carries WWW-Authenticate');
    assert.deepEqual(denied.headers['set-cookie'], ['attempt=1', 'seen=yes'], 'every Set-Cookie line, each on its own');
    assert.equal(denied.text, 'who are you');
    const login = await get('/fa-login');
    assert.equal(login.status, 302);
    assert.equal(login.headers.location, 'https://idp.example/login', 'redirect-to-login flows need Location');
  });

  await t.test('forward-auth: timeoutMs bounds the whole call, also against a service that trickles its answer', async () => {
    const t0 = Date.now();
    const r = await get('/fa-drip');
    const ms = Date.now() - t0;
    assert.equal(r.status, 503, r.text);
    assert.ok(ms < 2_500, `answered after ${ms} ms (timeoutMs 500; the service takes 4 s)`);
  });

  await t.test('http-callout: a field the service did not return is dropped; a value HTTP cannot carry is the service’s failure', async () => {
    const r = await get('/co', { 'x-tier': 'platinum' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.headers['x-tier'], undefined);
    const bad = await get('/co-bad');
    assert.equal(bad.status, 502, bad.text);
    assert.equal(bad.json.code, 'Svc.Data.CalloutFailed');
    const optional = await get('/co-opt', { 'x-tier': 'platinum' });
    assert.equal(optional.status, 200, optional.text);
    assert.equal(optional.json.headers['x-tier'], undefined);
    assert.equal(optional.json.headers['x-injected'], undefined);
  });

  await t.test('a failed check that lets the request on (Continue, an any group) still drops the client’s identity headers', async () => {
    // Regression: the header was dropped only on the success path, so "optional auth"
    // passed a client's own X-Consumer-Id / X-User-Id to the upstream.
    const cases: [string, Record<string, string>, string][] = [
      ['/opt-key', { 'x-consumer-id': 'admin' }, 'x-consumer-id'],
      ['/opt-key', { 'x-api-key': 'wrong', 'x-consumer-id': 'admin' }, 'x-consumer-id'],
      ['/opt-jwt', { authorization: 'Bearer a.b.c', 'x-consumer-id': 'admin' }, 'x-consumer-id'],
      ['/opt-fa', { 'x-user-id': 'admin' }, 'x-user-id'],
      // key-auth passes (its consumer goes in x-key-consumer), jwt-auth fails: its header too is the gateway's.
      ['/any-of', { 'x-api-key': 'good-key', 'x-consumer-id': 'admin', 'x-key-consumer': 'admin' }, 'x-consumer-id'],
    ];
    for (const [path, headers, owned] of cases) {
      const r = await get(path, headers);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      assert.equal(r.json.headers[owned], undefined, `${path} ${JSON.stringify(headers)}: ${owned} reached the upstream`);
    }
    const passed = await get('/opt-key', { 'x-api-key': 'good-key', 'x-consumer-id': 'admin' });
    assert.equal(passed.json.headers['x-consumer-id'], 'app', 'a passing check sets its own value');
    const anyKey = await get('/any-of', { 'x-api-key': 'good-key', 'x-key-consumer': 'admin' });
    assert.equal(anyKey.json.headers['x-key-consumer'], 'app');
  });

  await t.test('basic-auth: a consumer name beyond ASCII reaches the upstream percent-encoded', async () => {
    const r = await get('/basic', { authorization: `Basic ${Buffer.from('zoë:pw').toString('base64')}` });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.headers['x-consumer-id'], 'zo%C3%AB');
  });
});

/**
 * Regression: forward-auth and http-callout copied their `requestHeaders` from the
 * client's request, not from the request as the preceding steps left it. Behind key-auth,
 * a client typing `X-Consumer-Id: admin` had a profile service look up "admin" and the
 * upstream receive that profile's role under the real consumer's name.
 */
test('a called service sees the request headers as the preceding steps left them', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const seen: string[] = [];
  const service = createServer((req, res) => {
    const who = String(req.headers['x-consumer-id'] ?? '');
    seen.push(who);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ role: who === 'admin' ? 'superuser' : `role-of-${who}` }));
  });
  await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => service.close(r)));
  const svc = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  const sha = createHash('sha256').update('good-key').digest('hex');
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'profile', { cluster: 'up', pathPrefix: '/profile', steps: [
      { code: 'key-auth', settings: { keys: [{ id: 'app', sha256: sha }] } },
      { code: 'http-callout', settings: { url: `${svc}/profile`, requestHeaders: ['X-Consumer-Id'], map: { 'x-role': '/role' } } },
    ] }],
    ['route', 'fa', { cluster: 'up', pathPrefix: '/fa', steps: [
      { code: 'request-headers', settings: { set: { 'x-consumer-id': 'gateway-set' } } },
      { code: 'forward-auth', settings: { url: `${svc}/auth`, requestHeaders: ['x-consumer-id'] } },
    ] }],
  ]);

  const r = await request(`${gw.dataUrl}/profile`, { headers: { 'x-api-key': 'good-key', 'x-consumer-id': 'admin' } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(seen, ['app'], 'the profile service was asked about the consumer key-auth found');
  assert.equal(r.json.headers['x-consumer-id'], 'app');
  assert.equal(r.json.headers['x-role'], 'role-of-app');

  seen.length = 0;
  const f = await request(`${gw.dataUrl}/fa`, { headers: { 'x-consumer-id': 'client-typed' } });
  assert.equal(f.status, 200, f.text);
  assert.deepEqual(seen, ['gateway-set'], 'forward-auth sent the value request-headers set');
});
