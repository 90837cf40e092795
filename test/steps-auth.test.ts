import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, scryptSync } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, deleteEntity, dryRun, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { rawRequest } from './helpers/raw-http.js';
import { BOUNDED } from './helpers/wait.js';
import { startService } from './helpers/service.js';

function scryptHash(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32, { N: 1024, r: 8, p: 1 });
  return `scrypt$1024$8$1$${salt.toString('base64')}$${hash.toString('base64')}`;
}

test('basic-auth and jwt-auth on the data port', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const secret = randomBytes(32).toString('hex');
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
  const rotated = await generateKeyPair('ES256');
  const next = { ...(await exportJWK(rotated.publicKey)), kid: 'k2', alg: 'ES256' };
  const rsa = await generateKeyPair('RS256');
  const rsaJwk = { ...(await exportJWK(rsa.publicKey)), kid: 'r1', alg: 'RS256' };
  // `*`: the default tenant may name any variable but an admin key's tokenEnv.
  const gw = await startGateway(t, { keys: [ROOT_KEY], env: { SY_TEST_JWT_SECRET: secret }, edit: (c) => (c.secrets = { env: { default: ['*'] } }) });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'basic', { cluster: 'up', pathPrefix: '/basic', steps: [{ code: 'basic-auth', settings: { realm: 'ops', users: [{ username: 'alice', scrypt: scryptHash('s3cret pass') }] } }] }],
    ['route', 'hs', { cluster: 'up', pathPrefix: '/hs', steps: [{ code: 'jwt-auth', settings: { algorithms: ['HS256'], secretEnv: 'SY_TEST_JWT_SECRET', issuer: 'idp', audience: 'api' } }] }],
    ['route', 'es', { cluster: 'up', pathPrefix: '/es', steps: [{ code: 'jwt-auth', settings: { algorithms: ['ES256'], jwks: { keys: [jwk] } } }] }],
    ['route', 'rs', { cluster: 'up', pathPrefix: '/rs', steps: [{ code: 'jwt-auth', settings: { algorithms: ['RS256'], jwks: { keys: [rsaJwk] }, audience: 'api' } }] }],
    // Key rotation: two keys of one algorithm, tokens that name no kid.
    ['route', 'rotation', { cluster: 'up', pathPrefix: '/rotation', steps: [{ code: 'jwt-auth', settings: { algorithms: ['ES256'], jwks: { keys: [next, jwk] } } }] }],
  ]);
  const get = (path: string, headers: Record<string, string> = {}) => request(`${gw.dataUrl}${path}`, { headers });
  const basic = (u: string, p: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });

  await t.test('basic-auth: 401 with WWW-Authenticate; the right password passes, twice (cached), the user goes upstream', async () => {
    const none = await get('/basic');
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /^Basic realm="ops"/);
    const wrong = await get('/basic', basic('alice', 'wrong'));
    assert.equal(wrong.status, 401);
    // A step's refusal is built once per route; each request's envelope still has its own trace id.
    const [first, second] = [none.json, wrong.json];
    assert.equal(first.code, 'Svc.Data.Unauthenticated');
    assert.match(String(first.traceId), /^w\d+-[0-9a-f]{8}-[0-9a-z]+$/);
    assert.notEqual(first.traceId, second.traceId);
    assert.equal((await get('/basic', basic('bob', 's3cret pass'))).status, 401);
    for (let i = 0; i < 2; i++) {
      const ok = await get('/basic', basic('alice', 's3cret pass'));
      assert.equal(ok.status, 200);
      assert.equal(ok.json.headers['x-consumer-id'], 'alice');
      assert.equal(ok.json.headers.authorization, undefined, 'the credentials are not forwarded');
    }
  });

  const hs = (claims: Record<string, unknown>, exp: string | number = '5m', key = secret) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('user-7').setExpirationTime(exp).sign(Buffer.from(key));
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  await t.test('jwt-auth HS256: signature, issuer, audience and expiry are checked', async () => {
    const ok = await get('/hs', bearer(await hs({ iss: 'idp', aud: 'api' })));
    assert.equal(ok.status, 200);
    assert.equal(ok.json.headers['x-consumer-id'], 'user-7');
    assert.equal((await get('/hs', bearer(await hs({ iss: 'other', aud: 'api' })))).status, 401);
    assert.equal((await get('/hs', bearer(await hs({ iss: 'idp', aud: 'web' })))).status, 401);
    assert.equal((await get('/hs', bearer(await hs({ iss: 'idp', aud: 'api' }, Math.floor(Date.now() / 1000) - 120)))).status, 401);
    assert.equal((await get('/hs', bearer(await hs({ iss: 'idp', aud: 'api' }, '5m', 'not-the-secret')))).status, 401);
    assert.equal((await get('/hs')).status, 401);
  });

  await t.test('jwt-auth ES256 against an inline JWKS', async () => {
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setSubject('svc-1').setExpirationTime('5m').sign(privateKey);
    const ok = await get('/es', bearer(token));
    assert.equal(ok.status, 200);
    assert.equal(ok.json.headers['x-consumer-id'], 'svc-1');
    const other = await generateKeyPair('ES256');
    const forged = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setExpirationTime('5m').sign(other.privateKey);
    assert.equal((await get('/es', bearer(forged))).status, 401);
  });

  await t.test('jwt-auth: a token without kid is tried against every key of its algorithm (key rotation)', async () => {
    // Regression: with two ES256 keys, jose reported "multiple matching keys" and every token without kid got 401.
    for (const [signer, sub] of [[privateKey, 'old-key'], [rotated.privateKey, 'new-key']] as const) {
      const token = await new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setSubject(sub).setExpirationTime('5m').sign(signer);
      const ok = await get('/rotation', bearer(token));
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.json.headers['x-consumer-id'], sub);
    }
    const stranger = await generateKeyPair('ES256');
    const forged = await new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setExpirationTime('5m').sign(stranger.privateKey);
    assert.equal((await get('/rotation', bearer(forged))).status, 401);
  });

  await t.test('jwt-auth: a sub that is not a string is refused (401), never forwarded', async () => {
    // Regression: an object sub answered 400 and an array ["a","b"] went upstream as "a, b".
    for (const sub of [{ id: 'a' }, ['a', 'b'], 7]) {
      const token = await new SignJWT({ sub } as never).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setExpirationTime('5m').sign(privateKey);
      const r = await get('/es', { ...bearer(token), 'x-consumer-id': 'admin' });
      assert.equal(r.status, 401, `sub ${JSON.stringify(sub)}: ${r.text}`);
    }
  });

  await t.test('jwt-auth: a JWKS that cannot verify anything is a compile issue, not 401 on every request', async () => {
    // Regression: a private JWK, a malformed one or an empty key list published fine.
    const extractable = await generateKeyPair('ES256', { extractable: true });
    const priv = { ...(await exportJWK(extractable.privateKey)), kid: 'p' };
    // An RSA key under 2048 bits: jose never verifies with it (and in a rotation it hid the good key).
    const short = { ...generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' }), kid: 'short' };
    const cases: unknown[] = [{ keys: [priv] }, { keys: [{ kty: 'EC', crv: 'P-256', x: 'not-base64url!', y: 'x' }] }, { keys: [] }, { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }, { keys: [short, rsaJwk] }];
    for (const jwks of cases) {
      await setEntity(gw, 'route', 'bad-jwks', { cluster: 'up', pathPrefix: '/bad-jwks', steps: [{ code: 'jwt-auth', settings: { algorithms: ['ES256'], jwks } }] });
      const r = await dryRun(gw);
      assert.equal(r.status, 422, JSON.stringify(jwks));
      assert.ok(r.json.issues.some((i) => i.name === 'bad-jwks' && i.pointer.startsWith('/steps/0/settings')), JSON.stringify(r.json.issues));
    }
    await deleteEntity(gw, 'route', 'bad-jwks');
  });

  await t.test('jwt-auth RS256 against an inline JWKS; a token signed for another algorithm is refused', async () => {
    const token = await new SignJWT({ aud: 'api' }).setProtectedHeader({ alg: 'RS256', kid: 'r1' }).setSubject('svc-rsa').setExpirationTime('5m').sign(rsa.privateKey);
    const ok = await get('/rs', bearer(token));
    assert.equal(ok.status, 200);
    assert.equal(ok.json.headers['x-consumer-id'], 'svc-rsa');
    const es = await new SignJWT({ aud: 'api' }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setExpirationTime('5m').sign(privateKey);
    assert.equal((await get('/rs', bearer(es))).status, 401, 'ES256 is not an allowed algorithm on this route');
  });
});

// Regression: the service-calling steps used undici's Agent, whose Pool kept a client
// marked busy after a call undici refused before sending it (a copied header with a DEL
// byte): after 64 of them (the connections per service) every call of the step waited.
test('forward-auth and http-callout answer 400 Svc.Data.BadRequest when a copied header holds a DEL byte, and 70 of them do not stop their calls', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const url = `${await startService(t, { body: { tier: 'gold' }, userId: 'u-7' })}check`;
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'fa', { cluster: 'up', pathPrefix: '/fa', steps: [{ code: 'forward-auth', settings: { url, requestHeaders: ['authorization'], upstreamHeaders: ['x-user-id'] } }] }],
    ['route', 'co', { cluster: 'up', pathPrefix: '/co', steps: [{ code: 'http-callout', settings: { url, requestHeaders: ['authorization'], map: { 'x-tier': '/tier' } } }] }],
  ]);
  for (const path of ['/fa', '/co']) {
    for (let batch = 0; batch < 2; batch++) {
      const answers = await Promise.all(Array.from({ length: 35 }, () => rawRequest(gw.dataPort, [`GET ${path} HTTP/1.1`, 'Host: x', 'Authorization: Bearer a\x7fb', 'Connection: close'])));
      for (const r of answers) {
        assert.equal(r.status, 400, `${path}: ${r.raw}`);
        assert.equal(r.json.code, 'Svc.Data.BadRequest');
      }
    }
    const ok = await request(`${gw.dataUrl}${path}`, { headers: { authorization: 'Bearer fine' } });
    assert.equal(ok.status, 200, `${path} after the refused calls: ${ok.text}`);
  }
  const seen = up.requests.map((r) => [r.url, r.headers['x-user-id'] ?? r.headers['x-tier']]);
  assert.deepEqual(seen, [['/fa', 'u-7'], ['/co', 'gold']]);
});
