import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, deleteEntity, dryRun, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { freePorts } from './helpers/ports.js';
import { startProvider, type TestProvider } from './helpers/oidc-provider.js';
import { launchBrowser } from './helpers/browser.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

const CLIENT_SECRET = `web-${randomBytes(12).toString('hex')}`;
const HTML = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';

/** The provider's own login form (devInteractions): any name, then consent. */
async function signInAtProvider(page: Page, provider: TestProvider, login: string): Promise<void> {
  await page.waitForURL((u) => u.href.startsWith(provider.issuer));
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** What the echo upstream received, as the page shows it. */
async function echoed(page: Page): Promise<{ url: string; headers: Record<string, string> }> {
  return JSON.parse((await page.locator('body').textContent()) ?? '') as { url: string; headers: Record<string, string> };
}

async function cookieOf(context: BrowserContext, name: string, path = '/'): Promise<string> {
  const c = (await context.cookies()).find((x) => x.name === name && x.path === path);
  assert.ok(c, `cookie ${name} is set`);
  return c.value;
}

test('oidc-login: browser sign-in through the gateway, sealed session, refresh, logout', BOUNDED, async (t) => {
  const [dataPort, adminPort, closedPort] = await freePorts(3);
  const data = `http://127.0.0.1:${dataPort}`;
  const client = (id: string, bases: string[]) => ({
    client_id: id,
    client_secret: CLIENT_SECRET,
    redirect_uris: bases.map((b) => `${data}${b}/callback`),
    post_logout_redirect_uris: [`${data}/bye`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  });
  const idp = await startProvider(t, { clients: [client('gw-web', ['', '/staff'])], groups: { alice: ['staff'] } });
  // Tokens that live 4 s, so a refresh (2 s before expiry) is seen within the test.
  const shortIdp = await startProvider(t, { clients: [client('gw-fresh', ['/fresh'])], accessTokenTtl: 4, idTokenTtl: 4 });
  const up = await startUpstream(t);
  const cookieKey = randomBytes(32).toString('base64url');
  const gw = await startGateway(t, {
    dataPort,
    adminPort,
    keys: [ROOT_KEY],
    env: { SY_OIDC_SECRET: CLIENT_SECRET, SY_OIDC_COOKIE: cookieKey, SY_OIDC_SHORT_KEY: randomBytes(16).toString('base64'), SY_OIDC_NOT_LISTED: cookieKey },
    edit: (c) => {
      c.secrets = { env: { default: ['SY_OIDC_SECRET', 'SY_OIDC_COOKIE', 'SY_OIDC_SHORT_KEY'] } };
      // `//host` reaches the step as is: the return-target check, not path merging, must stop it.
      c.paths = { mergeSlashes: false };
    },
  });
  const common = { clientSecretEnv: 'SY_OIDC_SECRET', cookieSecretEnv: 'SY_OIDC_COOKIE', scopes: ['openid', 'email', 'groups'], claims: { email: 'x-user-email', sub: 'x-user-id' } };
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'bye', { cluster: 'up', pathPrefix: '/bye' }],
    ['route', 'app', { cluster: 'up', pathPrefix: '/', steps: [{ code: 'oidc-login', settings: { ...common, issuer: idp.issuer, clientId: 'gw-web', redirectUri: `${data}/callback`, postLogoutRedirectUri: `${data}/bye`, cookieName: 'app_session' } }] }],
    ['route', 'staff', { cluster: 'up', pathPrefix: '/staff', steps: [{ code: 'oidc-login', settings: { ...common, issuer: idp.issuer, clientId: 'gw-web', redirectUri: `${data}/staff/callback`, cookieName: 'app_session', cookiePath: '/staff', requiredClaims: { groups: 'staff' } } }] }],
    ['route', 'fresh', { cluster: 'up', pathPrefix: '/fresh', steps: [{ code: 'oidc-login', settings: { ...common, issuer: shortIdp.issuer, clientId: 'gw-fresh', redirectUri: `${data}/fresh/callback`, cookieName: 'fresh_session', cookiePath: '/fresh', refreshBeforeSeconds: 2 } }] }],
    ['route', 'down', { cluster: 'up', pathPrefix: '/down', steps: [{ code: 'oidc-login', settings: { ...common, issuer: `http://127.0.0.1:${closedPort}`, clientId: 'gw-web', redirectUri: `${data}/down/callback`, cookieName: 'down_session' } }] }],
  ]);
  const browser: Browser = await launchBrowser(t);
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  let session = '';

  await t.test('a protected page redirects to the provider; after sign-in it loads with the email header at the upstream', async () => {
    const first = await request(`${data}/orders?page=2`, { headers: { accept: HTML } });
    assert.equal(first.status, 302);
    const to = new URL(String(first.headers.location));
    assert.equal(`${to.origin}${to.pathname}`, `${idp.issuer}/auth`);
    assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(to.searchParams.get('state') && to.searchParams.get('nonce') && to.searchParams.get('code_challenge'));
    assert.equal(to.searchParams.get('redirect_uri'), `${data}/callback`);
    const login = [first.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('app_session_login='));
    assert.match(String(login), /; Path=\/callback; .*HttpOnly/i);
    assert.match(String(login), /SameSite=Lax/i);

    await page.goto(`${data}/orders?page=2`);
    await signInAtProvider(page, idp, 'alice');
    await page.waitForURL(`${data}/orders?page=2`);
    const got = await echoed(page);
    assert.equal(got.url, '/orders?page=2');
    assert.equal(got.headers['x-user-email'], 'alice@example.test');
    assert.equal(got.headers['x-user-id'], 'alice');
    assert.equal(got.headers.cookie?.includes('app_session_login'), false, 'the login cookie is spent at the callback');
    const c = (await context.cookies()).find((x) => x.name === 'app_session' && x.path === '/')!;
    assert.equal(c.httpOnly, true);
    assert.equal(c.sameSite, 'Lax');
    assert.equal(c.secure, false, 'not Secure on plain http');
    session = c.value;
    assert.ok(session.length < 4000);
  });

  await t.test('requiredClaims: a member of the group passes, another user gets 403', async () => {
    await page.goto(`${data}/staff/board`);
    // The staff route's cookie is its own (another route, another binding): it signs in again, silently at the provider.
    await page.waitForURL(`${data}/staff/board`);
    assert.equal((await echoed(page)).headers['x-user-email'], 'alice@example.test');
    const other = await browser.newContext();
    const p2 = await other.newPage();
    await p2.goto(`${data}/staff/board`);
    await signInAtProvider(p2, idp, 'bob');
    await p2.waitForURL((u) => u.href.startsWith(`${data}/staff/callback`));
    assert.match((await p2.locator('body').textContent()) ?? '', /Svc\.Data\.Forbidden/);
    assert.equal(up.requests.some((r) => r.headers['x-user-id'] === 'bob'), false);
    await other.close();
  });

  await t.test('a forged x-user-email never reaches the upstream', async () => {
    const withSession = await request(`${data}/me`, { headers: { cookie: `app_session=${session}`, 'x-user-email': 'root@evil.example', accept: 'application/json' } });
    assert.equal(withSession.status, 200);
    assert.equal((withSession.json as { headers: Record<string, string> }).headers['x-user-email'], 'alice@example.test');
    const open = await request(`${data}/bye/x`, { headers: { 'x-user-email': 'root@evil.example' } });
    assert.equal((open.json as { headers: Record<string, string> }).headers['x-user-email'], 'root@evil.example', 'a route without the step leaves it alone');
  });

  await t.test('a tampered, foreign or absent cookie is no session: 401 JSON for API clients, a redirect for pages', async () => {
    const mid = Math.floor(session.length / 2);
    const tampered = session.slice(0, mid) + (session[mid] === 'A' ? 'B' : 'A') + session.slice(mid + 1);
    for (const cookie of [`app_session=${tampered}`, '', `app_session=${session}x`]) {
      const api = await request(`${data}/me`, { headers: { cookie, accept: 'application/json' } });
      assert.equal(api.status, 401);
      assert.equal((api.json as { code: string }).code, 'Svc.Data.Unauthenticated');
      assert.match(String(api.headers['content-type']), /application\/json/);
      const none = await request(`${data}/me`, { headers: { cookie } });
      assert.equal(none.status, 401, 'no Accept: an API client');
      const pageLoad = await request(`${data}/me`, { headers: { cookie, accept: HTML } });
      assert.equal(pageLoad.status, 302);
      assert.ok(String(pageLoad.headers.location).startsWith(`${idp.issuer}/auth?`));
    }
    // The staff route's cookie has the same name and key, but is bound to its own route.
    const staffSession = await cookieOf(context, 'app_session', '/staff');
    assert.notEqual(staffSession, session);
    assert.equal((await request(`${data}/me`, { headers: { cookie: `app_session=${staffSession}`, accept: 'application/json' } })).status, 401);
  });

  await t.test('open redirects are refused: a //host target comes back to this host, logout ignores a client-given target', async () => {
    const other = await browser.newContext();
    const p2 = await other.newPage();
    await p2.goto(`${data}//evil.example/steal`);
    await signInAtProvider(p2, idp, 'carol');
    // The return target is the request's own path: unmerged, a leading `//` is still never
    // kept (normalize-path.ts), and the step takes only a single-slash path (return-target.ts).
    await p2.waitForURL((u) => u.origin === data);
    assert.equal(new URL(p2.url()).pathname, '/evil.example/steal');
    assert.equal((await echoed(p2)).headers['x-user-email'], 'carol@example.test');
    const carol = await cookieOf(other, 'app_session');
    const out = await request(`${data}/logout?post_logout_redirect_uri=${encodeURIComponent('http://evil.example/')}`, { headers: { cookie: `app_session=${carol}` } });
    assert.equal(out.status, 302);
    const to = new URL(String(out.headers.location));
    assert.equal(`${to.origin}${to.pathname}`, `${idp.issuer}/session/end`);
    assert.deepEqual(to.searchParams.getAll('post_logout_redirect_uri'), [`${data}/bye`]);
    await other.close();
  });

  await t.test('logout clears the session and ends it at the provider; the next page load goes to the provider again', async () => {
    const authBefore = idp.hits.get('/auth') ?? 0;
    await page.goto(`${data}/logout`);
    await page.getByRole('button', { name: /sign me out/i }).click();
    await page.waitForURL(`${data}/bye`);
    assert.equal((await context.cookies()).some((c) => c.name === 'app_session' && c.path === '/'), false);
    await page.goto(`${data}/orders`);
    await page.waitForURL((u) => u.href.startsWith(idp.issuer));
    assert.ok((idp.hits.get('/auth') ?? 0) > authBefore);
    await page.locator('input[name=login]').waitFor();
  });

  await t.test('the session is refreshed before expiry and continues past the first tokens\' lifetime', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    await p.goto(`${data}/fresh/a`);
    await signInAtProvider(p, shortIdp, 'dave');
    await p.waitForURL(`${data}/fresh/a`);
    const signedInAt = Date.now();
    const tokenCalls = shortIdp.hits.get('/token') ?? 0; // the code exchange
    const authCalls = shortIdp.hits.get('/auth') ?? 0;
    const firstCookie = await cookieOf(ctx, 'fresh_session', '/fresh');
    // Page loads until the first tokens (4 s) have expired: each one served, never sent to sign in.
    await waitFor(
      'a page load past the first tokens\' expiry',
      async () => {
        await p.goto(`${data}/fresh/b`);
        assert.equal(new URL(p.url()).origin, data, 'never redirected to the provider');
        assert.equal((await echoed(p)).headers['x-user-email'], 'dave@example.test');
        return Date.now() - signedInAt > 5_000;
      },
      { timeoutMs: 15_000, intervalMs: 500 },
    );
    assert.ok((shortIdp.hits.get('/token') ?? 0) > tokenCalls, 'the refresh token was used');
    assert.equal(shortIdp.hits.get('/auth') ?? 0, authCalls, 'no new sign-in');
    assert.notEqual(await cookieOf(ctx, 'fresh_session', '/fresh'), firstCookie, 'the refreshed cookie came with a response');

    // A refresh that fails (the provider is gone) ends the session: 401, and the cookie is cleared.
    const last = await cookieOf(ctx, 'fresh_session', '/fresh');
    await ctx.close();
    await shortIdp.stop();
    const ended = await waitFor(
      'the refresh window of the last cookie',
      async () => {
        const r = await request(`${data}/fresh/api`, { headers: { cookie: `fresh_session=${last}`, accept: 'application/json' } });
        if (r.status === 200) return false;
        return r;
      },
      { timeoutMs: 8_000, intervalMs: 200 },
    );
    assert.equal(ended.status, 401);
    assert.ok([ended.headers['set-cookie'] ?? []].flat().some((c) => /^fresh_session=; .*Max-Age=0/i.test(c)), 'the cookie is cleared');
  });

  await t.test('a provider that cannot be reached: 503 Svc.Data.AuthUnavailable at sign-in', async () => {
    const r = await request(`${data}/down/x`, { headers: { accept: HTML } });
    assert.equal(r.status, 503);
    assert.equal((r.json as { code: string }).code, 'Svc.Data.AuthUnavailable');
    const line = await waitFor('the warn line', () => gw.logLines().find((l) => (l as { msg?: string; during?: string }).msg === 'identity provider call failed' && (l as { during?: string }).during === 'sign-in') as { error: string; tenant: string } | undefined);
    assert.equal(line.error, 'ECONNREFUSED');
    assert.equal(line.tenant, 'default');
  });

  await t.test('publish refuses a short cookie key, a variable secrets.env does not list, an issuer the allow-list refuses', async () => {
    const settings = { ...common, issuer: idp.issuer, clientId: 'gw-web', redirectUri: `${data}/bad/callback` };
    await setEntity(gw, 'route', 'bad', {
      cluster: 'up',
      pathPrefix: '/bad',
      steps: [
        { code: 'oidc-login', settings: { ...settings, cookieSecretEnv: 'SY_OIDC_SHORT_KEY' } },
        { code: 'oidc-login', settings: { ...settings, cookieSecretEnv: 'SY_OIDC_NOT_LISTED' } },
        { code: 'oidc-login', settings: { ...settings, issuer: `http://127.0.0.1:${dataPort}` } },
      ],
    });
    const r = await dryRun(gw);
    assert.equal(r.status, 422);
    const issues = r.json.issues.filter((i) => i.name === 'bad').map((i) => [i.pointer, i.code]);
    assert.deepEqual(issues, [
      ['/steps/0/settings', 'Compile.Step.Settings'],
      ['/steps/1/settings/cookieSecretEnv', 'Compile.Step.SecretNotAllowed'],
      ['/steps/2/settings/issuer', 'Compile.Step.UrlDenied'],
    ]);
    assert.match(r.json.issues.find((i) => i.pointer === '/steps/0/settings')!.message, /32-byte key/);
    await deleteEntity(gw, 'route', 'bad');
  });

  await t.test('no cookie value or code in the gateway log', () => {
    const log = gw.stderr() + gw.stdout();
    assert.equal(log.includes(session), false);
    assert.equal(/[?&]code=/.test(log), false);
  });
});
