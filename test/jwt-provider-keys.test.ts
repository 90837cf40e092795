import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type JWTPayload } from 'jose';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus, dryRun, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED, waitFor } from './helpers/wait.js';
import { startProvider } from './helpers/oidc-provider.js';

/** A JSON document on 127.0.0.1 (a JWKS, a discovery document), with its caching headers; counts its requests. */
async function serveJson(t: { after(fn: () => unknown): void }, body: () => unknown, headers: Record<string, string> = {}): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server: Server = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

/** The /metrics samples of `name`, with their labels. */
async function samples(gw: Gateway, name: string): Promise<{ labels: Record<string, string>; value: number }[]> {
  const r = await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root });
  assert.equal(r.status, 200);
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of r.text.split('\n')) {
    const m = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of m[2]!.matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

async function sample(gw: Gateway, name: string, want: Record<string, string>): Promise<number> {
  const hit = (await samples(gw, name)).find((s) => Object.entries(want).every(([k, v]) => s.labels[k] === v));
  return hit?.value ?? -1;
}

test('jwt-auth with keys from an OpenID provider: discovery, rotation without a publish, fail static, then 503', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const idp = await startProvider(t);
  const ps = await startProvider(t, { alg: 'PS256' });
  const ed = await startProvider(t, { alg: 'EdDSA' });
  // Own keys and tokens for the claim checks: a JWKS served with Cache-Control.
  const own = await generateKeyPair('ES256');
  const ownJwk = { ...(await exportJWK(own.publicKey)), kid: 'own-1', alg: 'ES256' };
  const jwks = await serveJson(t, () => ({ keys: [ownJwk] }), { 'cache-control': 'public, max-age=600' });
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 2 });
  // An issuer whose discovery names a JWKS on the gateway's admin port: refused when the supervisor connects.
  const sneaky = await serveJson(t, () => ({ issuer: sneaky.url, jwks_uri: `http://127.0.0.1:${gw.adminPort}/jwks` }));
  const base = { algorithms: ['RS256'], audience: 'urn:jwt', minRefreshSeconds: 1 };
  const published = await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'iss', { cluster: 'up', pathPrefix: '/iss', steps: [{ code: 'jwt-auth', settings: { ...base, issuer: idp.issuer, maxStaleSeconds: 6, requiredScopes: ['orders:read'], claims: { client_id: 'x-client-id' } } }] }],
    ['route', 'ps', { cluster: 'up', pathPrefix: '/ps', steps: [{ code: 'jwt-auth', settings: { ...base, algorithms: ['PS256'], issuer: ps.issuer } }] }],
    ['route', 'ed', { cluster: 'up', pathPrefix: '/ed', steps: [{ code: 'jwt-auth', settings: { ...base, algorithms: ['EdDSA'], issuer: ed.issuer } }] }],
    [
      'route',
      'own',
      {
        cluster: 'up',
        pathPrefix: '/own',
        steps: [{ code: 'jwt-auth', settings: { algorithms: ['ES256'], jwksUri: `${jwks.url}/jwks.json`, minRefreshSeconds: 1, issuer: 'https://own.test', audience: ['api', 'other-api'], clockSkewSeconds: 5, requiredClaims: { tier: ['gold', 'silver'] }, requiredScopes: ['orders:read'], claims: { email: 'x-user-email', groups: 'x-user-groups' } } }],
      },
    ],
    ['route', 'sneaky', { cluster: 'up', pathPrefix: '/sneaky', steps: [{ code: 'jwt-auth', settings: { ...base, issuer: sneaky.url } }] }],
  ]);
  const get = (path: string, token?: string, headers: Record<string, string> = {}) => request(`${gw.dataUrl}${path}`, { headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  const idpSource = { tenant: 'default', source: idp.issuer };
  const okFetches = () => sample(gw, 'switchyard_auth_key_fetches_total', { ...idpSource, result: 'ok' });
  const state = async (src: Record<string, string>) => (await samples(gw, 'switchyard_auth_key_set_state')).find((s) => s.labels.source === src.source && s.value === 1)?.labels.state;

  await t.test('issuer only: a token the provider signed passes (the first request waits for the first fetch); the client\'s copy of a mapped claim header is dropped', async () => {
    const token = await idp.token('urn:jwt');
    const ok = await get('/iss', token, { 'x-client-id': 'forged', 'x-consumer-id': 'forged' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.headers['x-client-id'], 'gw-api', 'the claim, not the client\'s copy');
    assert.notEqual(ok.json.headers['x-consumer-id'], 'forged');
    assert.equal((await get('/iss')).status, 401);
    assert.equal((await get('/iss', `${token.slice(0, -4)}AAAA`)).status, 401, 'a bad signature');
    const other = await ps.token('urn:jwt');
    assert.equal((await get('/iss', other)).status, 401, 'a token of another provider');
  });

  await t.test('a token without a required scope: 403 with WWW-Authenticate insufficient_scope', async () => {
    const r = await get('/iss', await idp.token('urn:jwt', 'orders:write'));
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'Svc.Data.Forbidden');
    assert.match(String(r.headers['www-authenticate']), /^Bearer error="insufficient_scope", scope="orders:read"$/);
  });

  await t.test('PS256 and EdDSA providers', async () => {
    for (const [path, p] of [['/ps', ps], ['/ed', ed]] as const) {
      const token = await p.token('urn:jwt');
      assert.equal(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).alg, path === '/ps' ? 'PS256' : 'EdDSA');
      const r = await get(path, token);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
    }
    assert.equal((await get('/ps', await ed.token('urn:jwt'))).status, 401, 'an EdDSA token on a PS256 route');
  });

  await t.test('the provider rotates its key: the first request with the new kid passes, with no publish; one JWKS fetch per refresh for the node', async () => {
    // Every worker met an unknown kid just before (a key the provider never had): each is within its cooldown when the rotation comes.
    const stray = await generateKeyPair('RS256');
    const foreign = await new SignJWT({ sub: 'x', exp: Math.floor(Date.now() / 1000) + 300 }).setProtectedHeader({ alg: 'RS256', kid: 'never-published' }).sign(stray.privateKey);
    const refused = await Promise.all(Array.from({ length: 8 }, () => get('/iss', foreign, { connection: 'close' })));
    assert.deepEqual(refused.map((a) => a.status), Array(8).fill(401));
    const before = idp.kid;
    await idp.rotate();
    assert.notEqual(idp.kid, before);
    const token = await idp.token('urn:jwt');
    assert.equal(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid, idp.kid);
    // Concurrent first requests on fresh connections: both workers meet the unknown kid.
    const answers = await Promise.all(Array.from({ length: 8 }, () => get('/iss', token, { connection: 'close' })));
    assert.deepEqual(answers.map((a) => a.status), Array(8).fill(200), answers.map((a) => a.text).join('\n'));
    assert.equal((await clusterStatus(gw)).generation, published.generation, 'no publish');
    // Each refresh is one fetch for the node (2 workers), not one per worker.
    await waitFor('JWKS requests = the supervisor\'s fetches', async () => {
      const fetches = await okFetches();
      return idp.hits.get('/jwks') === fetches && fetches > 0;
    });
  });

  await t.test('jwksUri with its own keys: audience list, nbf, iat, exp, required claims, scopes, claims to headers', async () => {
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: JWTPayload) => new SignJWT({ iss: 'https://own.test', aud: 'other-api', sub: 'u-1', exp: now + 300, scope: 'orders:read', tier: 'gold', email: 'ann@example.test', groups: ['a', 'b'], ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'own-1' }).sign(own.privateKey);
    const ok = await get('/own', await sign({}), { 'x-user-email': 'forged@example.test' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.headers['x-user-email'], 'ann@example.test');
    assert.equal(ok.json.headers['x-user-groups'], 'a,b');
    assert.equal(ok.json.headers['x-consumer-id'], 'u-1');
    assert.equal((await get('/own', await sign({ aud: ['zzz', 'api'] }))).status, 200, 'any audience of the list');
    assert.equal((await get('/own', await sign({ aud: 'zzz' }))).status, 401);
    assert.equal((await get('/own', await sign({ nbf: now + 60 }))).status, 401, 'not yet valid');
    assert.equal((await get('/own', await sign({ nbf: now + 3 }))).status, 200, 'nbf within the skew');
    assert.equal((await get('/own', await sign({ iat: now + 60 }))).status, 401, 'issued in the future');
    assert.equal((await get('/own', await sign({ iat: now + 3 }))).status, 200, 'iat within the skew');
    assert.equal((await get('/own', await sign({ exp: now - 60 }))).status, 401, 'expired');
    const noClaim = await get('/own', await sign({ tier: 'bronze' }));
    assert.equal(noClaim.status, 403);
    assert.equal(noClaim.json.code, 'Svc.Data.Forbidden');
    const noScope = await get('/own', await sign({ scope: 'orders:write' }));
    assert.equal(noScope.status, 403);
    assert.match(String(noScope.headers['www-authenticate']), /insufficient_scope/);
    assert.equal(jwks.hits(), 1, 'max-age=600 (clamped to an hour at most): fetched once for the node');
  });

  await t.test('a respawned worker verifies at once with the sets it got at init: no fetch', async () => {
    const now = Math.floor(Date.now() / 1000);
    // A valid signature and a missing claim: 403, whose envelope names the worker process that verified it.
    const refusedBy = async () => {
      const token = await new SignJWT({ iss: 'https://own.test', aud: 'api', sub: 'u-2', exp: now + 300, scope: 'orders:read', tier: 'bronze', n: Math.random() }).setProtectedHeader({ alg: 'ES256', kid: 'own-1' }).sign(own.privateKey);
      const r = await get('/own', token, { connection: 'close' });
      assert.equal(r.status, 403, r.text);
      return /^(w\d+-[^-]+)-/.exec(String(r.json.traceId))?.[1];
    };
    const victim = (await clusterStatus(gw)).workers.find((w) => w.slot === 0)!;
    const oldTag = await waitFor('an answer of worker 0', async () => {
      const tag = await refusedBy();
      return tag?.startsWith('w0-') ? tag : undefined;
    }, { timeoutMs: 10_000, intervalMs: 0 });
    process.kill(victim.pid!, 'SIGKILL');
    await waitFor('worker 0 replaced', async () => (await clusterStatus(gw)).workers.some((w) => w.slot === 0 && w.state === 'listening' && w.pid !== victim.pid), { timeoutMs: 15_000, intervalMs: 50 });
    const fetched = jwks.hits();
    // Its first verification (a fresh token, an empty cache) needs no fetch: the key set came with init.
    await waitFor('a 403 from the new worker 0', async () => {
      const tag = await refusedBy();
      return tag?.startsWith('w0-') && tag !== oldTag;
    }, { timeoutMs: 10_000, intervalMs: 0 });
    assert.equal(jwks.hits(), fetched, 'no JWKS fetch for the new worker');
  });

  await t.test('discovery naming a JWKS on the admin port: refused at connect time, the route answers 503', async () => {
    const r = await get('/sneaky', await idp.token('urn:jwt'));
    assert.equal(r.status, 503);
    assert.equal(r.json.code, 'Svc.Data.AuthUnavailable');
    assert.ok((await sample(gw, 'switchyard_auth_key_fetches_total', { tenant: 'default', source: sneaky.url, result: 'denied' })) >= 1);
    assert.equal(await sample(gw, 'switchyard_auth_key_fetches_total', { tenant: 'default', source: sneaky.url, result: 'ok' }), 0);
  });

  await t.test('the provider stops: cached keys serve while stale, until maxStaleSeconds; then 503; both transitions logged once and in the metrics', async () => {
    const token = await idp.token('urn:jwt');
    assert.equal((await get('/iss', token)).status, 200);
    await idp.stop();
    const stoppedAt = Date.now();
    await waitFor('the key set goes stale', async () => (await state(idpSource)) === 'stale', { timeoutMs: 8_000 });
    // The stale push changed the set's version: this request is verified again, on the kept keys.
    const stale = await get('/iss', token);
    assert.equal(stale.status, 200, stale.text);
    const expired = await waitFor('503 once maxStaleSeconds passed', async () => {
      const r = await get('/iss', token);
      return r.status === 503 ? r : r.status === 200 ? false : assert.fail(`${r.status} ${r.text}`);
    }, { timeoutMs: 10_000, intervalMs: 100 });
    assert.equal(expired.json.code, 'Svc.Data.AuthUnavailable');
    assert.ok(Date.now() - stoppedAt <= 9_000);
    assert.equal(await state(idpSource), 'expired');
    assert.ok((await sample(gw, 'switchyard_auth_key_fetches_total', { ...idpSource, result: 'error' })) >= 1);
    for (const r of await Promise.all([get('/iss', token), get('/iss', token)])) assert.equal(r.status, 503);
    const lines = gw.logLines().filter((l) => (l as { source?: string }).source === idp.issuer);
    const msgs = lines.map((l) => String((l as { msg?: string }).msg));
    assert.equal(msgs.filter((m) => m.startsWith('key set stale')).length, 1, msgs.join('\n'));
    assert.equal(msgs.filter((m) => m.startsWith('key set expired')).length, 1, msgs.join('\n'));
    // Back: the next fetch (every minRefreshSeconds) brings the keys again.
    await idp.start();
    await waitFor('fresh again', async () => (await get('/iss', token)).status === 200, { timeoutMs: 5_000, intervalMs: 100 });
    assert.equal(await state(idpSource), 'fresh');
  });

  await t.test('another tenant\'s jwksUri or issuer at the admin port or the metadata address: refused at dry-run', async () => {
    const bad = [`http://127.0.0.1:${gw.adminPort}/jwks`, 'http://169.254.169.254/'];
    await setEntity(gw, 'cluster', 'up', { targets: ['example.com:80'] }, 'acme');
    const steps = bad.flatMap((url) => [
      { code: 'jwt-auth', settings: { algorithms: ['RS256'], jwksUri: url } },
      { code: 'jwt-auth', settings: { algorithms: ['RS256'], issuer: url } },
    ]);
    await setEntity(gw, 'route', 'r', { cluster: 'up', pathPrefix: '/', steps }, 'acme');
    const r = await dryRun(gw, 'acme');
    const denied = r.json.issues.filter((i) => i.code === 'Compile.Step.UrlDenied').map((i) => i.pointer).sort();
    assert.deepEqual(denied, ['/steps/0/settings/jwksUri', '/steps/1/settings/issuer', '/steps/2/settings/jwksUri', '/steps/3/settings/issuer'], JSON.stringify(r.json.issues));
  });
});
