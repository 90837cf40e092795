import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { request, type HttpResult } from './helpers/http.js';
import { ROOT_KEY, apply, dryRun, setEntity } from './helpers/admin.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';
import { startProvider, API_CLIENT, type TestProvider } from './helpers/oidc-provider.js';
import { sendMany } from './helpers/load.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

/**
 * oauth-introspection against a real OpenID provider (its RFC 7662 endpoint) through a
 * real `switchyard run` with 2 workers: one gateway and one provider for every subtest,
 * the fail-static one last (it stops the provider).
 */

const SECRET_ENV = 'SY_INTROSPECTION_SECRET';
const INTROSPECT = '/token/introspection';

const step = (provider: TestProvider, more: Record<string, unknown> = {}) => ({
  code: 'oauth-introspection',
  settings: { url: `${provider.issuer}${INTROSPECT}`, clientId: API_CLIENT.client_id, clientSecretEnv: SECRET_ENV, claims: { client_id: 'x-client-id', scope: 'x-scope' }, ...more },
});

const via = (gw: Gateway, host: string, token?: string, headers: Record<string, string> = {}): Promise<HttpResult> =>
  request(`${gw.dataUrl}/x`, { headers: { host, ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });

const calls = (p: TestProvider) => p.hits.get(INTROSPECT) ?? 0;

/** Workers ship their counts once a second: waits until the series reaches `atLeast`. */
const metricReaches = (gw: Gateway, name: string, labels: Record<string, string>, atLeast: number) =>
  waitFor(`${name} ${JSON.stringify(labels)} >= ${atLeast}`, async () => (await metricValue(gw, name, labels)) >= atLeast, { timeoutMs: 5_000, intervalMs: 100 });

async function metricValue(gw: Gateway, name: string, labels: Record<string, string>): Promise<number> {
  const text = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root })).text;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

test('oauth-introspection: claims to headers, revocation within cacheSeconds, one call per worker for 1,000 requests, fail static, compile-time refusals', BOUNDED, async (t) => {
  const provider = await startProvider(t);
  const up: Upstream = await startUpstream(t);
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    workers: 2,
    env: { [SECRET_ENV]: API_CLIENT.client_secret, SY_INTROSPECTION_ELSEWHERE: 'x'.repeat(20), SY_INTROSPECTION_UNSET: undefined },
    edit: (c) => (c.secrets = { env: { default: [SECRET_ENV], acme: [SECRET_ENV, 'SY_INTROSPECTION_UNSET'] } }),
  });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'api', { hosts: ['a.test'], cluster: 'up', steps: [step(provider, { requiredScopes: ['orders:read'] })] }],
    ['route', 'revocable', { hosts: ['r.test'], cluster: 'up', steps: [step(provider, { cacheSeconds: 2 })] }],
    ['route', 'static', { hosts: ['static.test'], cluster: 'up', steps: [step(provider, { cacheSeconds: 1, maxStaleSeconds: 4 })] }],
  ]);

  await t.test('an active token passes with its claims in headers; forged copies never reach the upstream; no, bad or under-scoped tokens are refused', async () => {
    const token = await provider.token('urn:opaque');
    const before = up.requests.length;
    const r = await via(gw, 'a.test', token, { 'x-client-id': 'forged', 'x-scope': 'forged', 'x-consumer-id': 'forged' });
    assert.equal(r.status, 200, r.text);
    const seen = up.requests.slice(before);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.headers['x-client-id'], API_CLIENT.client_id);
    assert.equal(seen[0]!.headers['x-scope'], 'orders:read');
    assert.equal(seen[0]!.headers['x-consumer-id'], undefined, 'a client_credentials token has no sub: the forged subject is dropped, not passed');
    assert.ok(!JSON.stringify(seen[0]!.rawHeaders).includes('forged'));

    const none = await via(gw, 'a.test');
    assert.equal(none.status, 401);
    assert.equal(none.json.code, 'Svc.Data.Unauthenticated');
    assert.equal(none.headers['www-authenticate'], 'Bearer');
    const bogus = await via(gw, 'a.test', 'not-a-token-the-provider-issued');
    assert.equal(bogus.status, 401);
    assert.match(String(bogus.headers['www-authenticate']), /^Bearer error="invalid_token"/);
    const writeOnly = await via(gw, 'a.test', await provider.token('urn:opaque', 'orders:write'));
    assert.equal(writeOnly.status, 403, writeOnly.text);
    assert.equal(writeOnly.json.code, 'Svc.Data.Forbidden');
    assert.equal(up.requests.length, before + 1, 'no refused request reached the upstream');
  });

  await t.test('1,000 requests with one token over 2 workers make at most 2 introspection calls, and a publish that leaves the step as it was keeps its answers', async (st) => {
    const token = await provider.token('urn:opaque');
    const start = calls(provider);
    const statuses = await sendMany(gw.dataPort, 1_000, 8, () => ({ authorization: `Bearer ${token}` }));
    assert.equal(statuses.length, 1_000);
    assert.ok(statuses.every((s) => s === 200), `statuses: ${[...new Set(statuses)].join(',')}`);
    const made = calls(provider) - start;
    assert.ok(made >= 1 && made <= 2, `introspection calls: ${made}`);
    st.diagnostic(`1,000 requests, ${made} introspection calls`);
    // The answers live in the step's per-route state: a publish that leaves the route's step as it was keeps them.
    await apply(gw, [['route', 'unrelated', { hosts: ['u.test'], directResponse: { statusCode: 204 } }]]);
    const after = await sendMany(gw.dataPort, 50, 8, () => ({ authorization: `Bearer ${token}` }));
    assert.ok(after.every((s) => s === 200));
    assert.equal(calls(provider) - start, made, 'no new call after a publish that left the step unchanged');
  });

  await t.test('a revoked token is refused within cacheSeconds (2 s) on every worker', async (st) => {
    const token = await provider.token('urn:opaque');
    for (let i = 0; i < 10; i++) assert.equal((await via(gw, 'r.test', token)).status, 200);
    await provider.revoke(token);
    const revokedAt = Date.now();
    // Fresh connections land on both workers: ten refusals in a row means each refuses.
    let inARow = 0;
    await waitFor('ten refusals in a row after the revocation', async () => {
      inARow = (await via(gw, 'r.test', token)).status === 401 ? inARow + 1 : 0;
      return inARow >= 10;
    }, { timeoutMs: 6_000, intervalMs: 1 });
    const took = Date.now() - revokedAt;
    assert.ok(took <= 2_000 + 800, `refused on every worker ${took} ms after revocation`);
    st.diagnostic(`revoked token refused on every worker ${took} ms after its revocation`);
    await metricReaches(gw, 'switchyard_introspection_calls_total', { route: 'revocable', result: 'inactive' }, 1);
    await metricReaches(gw, 'switchyard_introspection_calls_total', { route: 'revocable', result: 'active' }, 1);
  });

  await t.test('the provider down: a recently active token passes until maxStaleSeconds (4 s), a new one gets 503; logged once per transition', async (st) => {
    const known = await provider.token('urn:opaque');
    const fresh = await provider.token('urn:opaque');
    const primed = Date.now();
    for (let i = 0; i < 20; i++) assert.equal((await via(gw, 'static.test', known)).status, 200); // both workers cache it
    const primedEnd = Date.now();
    await provider.stop();
    const stoppedAt = Date.now();

    const n = await via(gw, 'static.test', fresh);
    assert.equal(n.status, 503, n.text);
    assert.equal(n.json.code, 'Svc.Data.AuthUnavailable');
    let lastPass = 0;
    let inARow = 0;
    await waitFor('the stale answer to run out', async () => {
      const r = await via(gw, 'static.test', known);
      if (r.status === 200) lastPass = Date.now();
      else assert.equal(r.status, 503, r.text);
      inARow = r.status === 503 ? inARow + 1 : 0;
      return inARow >= 10;
    }, { timeoutMs: 10_000, intervalMs: 20 });
    const refusedAt = Date.now();
    assert.ok(lastPass - stoppedAt > 1_500, `passed on a stale answer past cacheSeconds (last pass ${lastPass - stoppedAt} ms after the stop)`);
    // Every good answer came before primedEnd: none may be used 4 s after it (plus one request's way back).
    assert.ok(lastPass - primedEnd < 4_000 + 500, `no pass past maxStaleSeconds after the last good answer (${lastPass - primedEnd} ms)`);
    assert.ok(refusedAt - primedEnd < 4_000 + 1_500, `refused on every worker ${refusedAt - primedEnd} ms after the last good answer`);
    st.diagnostic(`stale passes until ${lastPass - stoppedAt} ms after the stop (${lastPass - primed} ms after the first good answer); refused on every worker ${refusedAt - primedEnd} ms after the last`);

    const lines = () => gw.logLines().map((l) => String((l as { msg?: string }).msg ?? ''));
    const down = lines().filter((m) => m.startsWith('introspection endpoint gives no usable answer')).length;
    const stale = lines().filter((m) => m === 'introspection: serving stale answers (fail static)').length;
    const refusing = lines().filter((m) => m.startsWith('introspection: refusing tokens')).length;
    assert.ok(down >= 1 && down <= 2, `outage lines: ${down}`);
    assert.ok(stale >= 1 && stale <= 2, `stale lines: ${stale}`);
    assert.ok(refusing >= 1 && refusing <= 2, `refusal lines: ${refusing}`);
    assert.ok(!gw.stderr().includes(known) && !gw.stdout().includes(known), 'the token is never logged');
    await metricReaches(gw, 'switchyard_introspection_fail_static_total', { route: 'static', outcome: 'stale' }, 1);
    await metricReaches(gw, 'switchyard_introspection_fail_static_total', { route: 'static', outcome: 'unavailable' }, 10);
    await metricReaches(gw, 'switchyard_introspection_calls_total', { route: 'static', result: 'error' }, 1);

    await provider.start();
    await waitFor('the provider answering again', async () => (await via(gw, 'static.test', fresh)).status === 200, { timeoutMs: 5_000 });
    await waitFor('the recovery logged', () => lines().some((m) => m === 'introspection endpoint answers again'));
  });

  await t.test('a url at the admin port or the metadata address, or a secret the tenant may not name, is refused at dry-run', async () => {
    const route = (settings: Record<string, unknown>[]) => ({ hosts: ['acme.test'], directResponse: { statusCode: 200, body: 'in' }, steps: settings.map((s) => ({ ...step(provider), settings: { ...step(provider).settings, ...s } })) });
    await setEntity(gw, 'route', 'intro', route([{ url: `http://127.0.0.1:${gw.adminPort}/introspect` }, { url: 'http://169.254.169.254/introspect' }]), 'acme');
    const urls = await dryRun(gw, 'acme');
    assert.equal(urls.status, 422, urls.text);
    assert.deepEqual(urls.json.issues.map((i) => `${i.pointer} ${i.code}`), ['/steps/0/settings/url Compile.Step.UrlDenied', '/steps/1/settings/url Compile.Step.UrlDenied']);
    assert.match(urls.json.issues[0]!.message, /admin port/);
    assert.match(urls.json.issues[1]!.message, /link-local/);

    const publicUrl = 'https://id.example.com/introspect';
    await setEntity(gw, 'route', 'intro', route([{ url: publicUrl, clientSecretEnv: 'SY_INTROSPECTION_ELSEWHERE' }, { url: publicUrl, clientSecretEnv: 'SY_INTROSPECTION_UNSET' }]), 'acme');
    const secrets = await dryRun(gw, 'acme');
    assert.equal(secrets.status, 422, secrets.text);
    assert.deepEqual(secrets.json.issues.map((i) => `${i.pointer} ${i.code}`), ['/steps/0/settings/clientSecretEnv Compile.Step.SecretNotAllowed', '/steps/1/settings Compile.Step.Settings']);
    assert.match(secrets.json.issues[1]!.message, /SY_INTROSPECTION_UNSET \(clientSecretEnv\) is not set/);
  });
});
