/**
 * Operators sign in to the console through an OpenID provider (worker.json admin.oidc):
 * a real provider (test/helpers/oidc-provider.ts), a real `switchyard run`, Chromium.
 * One gateway, one provider, one browser for every subtest: each user signs in in a fresh
 * browser context (its own cookies); the sign-out subtest ends the session alice's subtest opened.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page, Response } from 'playwright-core';
import { startGateway } from './helpers/gateway.js';
import { launchBrowser, newPage } from './helpers/browser.js';
import { startProvider } from './helpers/oidc-provider.js';
import { freePorts } from './helpers/ports.js';
import { request } from './helpers/http.js';

const CLIENT_ID = 'switchyard-console';
const CLIENT_SECRET = 'console-client-secret-5f0c2a9e81d4b7';
const SECRET_ENV = 'SY_TEST_OIDC_SECRET';

/**
 * The provider's built-in login form takes any name; its consent screen follows. Every
 * authorization code the browser carries back is noted in `seen` (none may reach the log).
 */
async function signInAs(browser: Browser, adminUrl: string, login: string, seen: string[]): Promise<{ page: Page; callback: Promise<Response> }> {
  const page = await newPage(browser);
  page.on('request', (r) => {
    if (r.url().includes('/oidc/callback')) seen.push(new URL(r.url()).searchParams.get('code') ?? '');
  });
  const callback = page.waitForResponse((r) => r.url().includes('/api/v1/sys/oidc/callback'));
  await page.goto(`${adminUrl}/console/`);
  await page.getByTestId('oidc-signin').click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  return { page, callback };
}

/** An admin call as the console makes it (same origin, the session cookie, the console header unless told otherwise). */
function callFromPage(page: Page, method: string, path: string, consoleHeader = true): Promise<{ status: number; body: { code?: string; [k: string]: unknown } }> {
  return page.evaluate(
    async ([m, p, h]) => {
      const res = await fetch(p as string, { method: m as string, headers: h ? { 'x-switchyard-console': '1', 'content-type': 'application/json' } : { 'content-type': 'application/json' }, body: m === 'POST' ? '{}' : undefined });
      return { status: res.status, body: await res.json() };
    },
    [method, path, consoleHeader] as const,
  );
}

async function sessionCookieOf(page: Page): Promise<string | undefined> {
  return (await page.context().cookies()).find((c) => c.name === 'switchyard_session')?.value;
}

test('console sign-in through an OpenID provider: mapped scopes, audit by subject, refusals, sign-out, CSRF, bearer tokens', { timeout: 90_000 }, async (t) => {
  const [dataPort, adminPort] = await freePorts(2);
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const provider = await startProvider(t, {
    groups: { alice: ['ops'], bob: ['acme-devs'], carol: ['sales'] },
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${adminUrl}/api/v1/sys/oidc/callback`],
        post_logout_redirect_uris: [`${adminUrl}/console/`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
  });
  const gw = await startGateway(t, {
    dataPort,
    adminPort,
    keys: [{ id: 'root', scopes: ['*'] }],
    env: { [SECRET_ENV]: CLIENT_SECRET },
    edit: (c) => {
      (c.admin as Record<string, unknown>).oidc = {
        issuer: provider.issuer,
        clientId: CLIENT_ID,
        clientSecretEnv: SECRET_ENV,
        publicUrl: adminUrl,
        providerName: 'Test IdP',
        scopes: ['openid', 'email', 'groups'],
        sessionSeconds: 600,
        providerLogout: true,
        mappings: [
          { claim: 'groups', value: 'ops', scopes: ['*'], tenant: null },
          { claim: 'groups', value: 'acme-devs', scopes: ['config:read'], tenant: 'acme' },
        ],
      };
    },
  });
  const browser = await launchBrowser(t);
  const root = gw.tokens.root!;
  const seen: string[] = []; // every session cookie and code the browsers held: none may reach the log
  let alice: Page | null = null;

  // First: discovery has not happened yet, so the sign-in itself must reach the provider.
  await t.test('provider unreachable at sign-in: a 503 page naming the cause; the next sign-in works again', async () => {
    await provider.stop();
    const page = await newPage(browser);
    await page.goto(`${adminUrl}/console/`);
    const answer = page.waitForResponse((r) => r.url().includes('/api/v1/sys/oidc/login'));
    await page.getByTestId('oidc-signin').click();
    assert.equal((await answer).status(), 503);
    assert.equal(await page.locator('#error-code').textContent(), 'Svc.Auth.ProviderUnavailable');
    assert.match((await page.locator('#error-message').textContent()) ?? '', /cannot be reached/);
    const json = await request(`${adminUrl}/api/v1/sys/oidc/login`);
    assert.equal(json.status, 503);
    assert.equal((json.json as { code: string }).code, 'Svc.Auth.ProviderUnavailable', 'a script gets the JSON envelope');
    await provider.start();
    await page.context().close();
  });

  await t.test('the gate offers the provider beside the token field (asked without credentials)', async () => {
    const status = await request(`${adminUrl}/api/v1/sys/oidc`);
    assert.deepEqual(status.json, { enabled: true, providerName: 'Test IdP', loginPath: '/api/v1/sys/oidc/login' });
    const page = await newPage(browser);
    await page.goto(`${adminUrl}/console/`);
    assert.equal(await page.getByTestId('oidc-signin').textContent(), 'Sign in with Test IdP');
    assert.equal(await page.getByLabel('Admin token').count(), 1);
    await page.context().close();
  });

  await t.test('bob (acme-devs) sees tenant acme read-only: no write controls, other tenants and writes refused', async () => {
    const { page } = await signInAs(browser, adminUrl, 'bob', seen);
    await page.getByRole('navigation', { name: 'Views' }).waitFor();
    assert.equal(await page.getByTestId('identity').textContent(), 'signed in as bob@example.test · tenant acme');
    assert.equal(await page.getByTestId('tenant-fixed').textContent(), 'Tenant acme');
    const nav = await page.getByRole('navigation', { name: 'Views' }).getByRole('link').allTextContents();
    assert.deepEqual(nav, ['Clusters', 'Routes', 'Chains', 'Certificates', 'Explain']);
    await page.getByTestId('nav-routes').click();
    assert.equal(await page.getByTestId('new-entity').isDisabled(), true, 'config:read alone: New is disabled');
    assert.equal((await callFromPage(page, 'GET', '/api/v1/acme/config/list/route')).status, 200);
    const other = await callFromPage(page, 'GET', '/api/v1/default/config/list/route');
    assert.deepEqual([other.status, other.body.code], [403, 'Svc.Auth.TenantScope']);
    const write = await callFromPage(page, 'POST', '/api/v1/acme/config/set/route/r1');
    assert.deepEqual([write.status, write.body.code], [403, 'Svc.Auth.Scope']);
    seen.push((await sessionCookieOf(page))!);
    await page.context().close();
  });

  await t.test('alice (ops) sees everything; her write in the console is audited under her subject', async () => {
    const { page } = await signInAs(browser, adminUrl, 'alice', seen);
    await page.getByRole('navigation', { name: 'Views' }).waitFor();
    assert.equal(await page.getByTestId('identity').textContent(), 'signed in as alice@example.test');
    assert.equal(await page.getByTestId('tenant-input').count(), 1, 'instance-wide: the tenant is hers to pick');
    assert.equal(await page.getByTestId('nav-keys').count(), 1);
    await page.getByTestId('nav-plugins').click();
    await page.getByTestId('plugin-toggle-cors').click();
    await page.getByTestId('plugin-state-cors').filter({ hasText: 'disabled' }).waitFor();

    const audit = await request(`${adminUrl}/api/v1/default/audit/list`, { token: root });
    const last = (audit.json as { items: { operation: string; identity: { id: string; kind: string } }[] }).items[0]!;
    assert.deepEqual([last.operation, last.identity.id, last.identity.kind], ['plugin.disable', 'oidc:alice', 'system']);
    alice = page; // signed in still: the sign-out subtest ends this session
  });

  await t.test('a user no mapping matches is refused sign-in (403) and gets no session', async () => {
    const { page, callback } = await signInAs(browser, adminUrl, 'carol', seen);
    assert.equal((await callback).status(), 403);
    assert.equal(await page.locator('#error-code').textContent(), 'Svc.Auth.NotMapped');
    assert.equal(await sessionCookieOf(page), undefined);
    await page.goto(`${adminUrl}/console/`);
    await page.getByTestId('oidc-signin').waitFor(); // the gate again: no session to open the console with
    assert.equal((await callFromPage(page, 'GET', '/api/v1/sys/whoami')).status, 401);
    await page.context().close();
  });

  await t.test('a session cookie without the console header is refused; sign-out ends the session on the server and at the provider', async () => {
    const page = alice!;
    const cookie = (await sessionCookieOf(page))!;
    seen.push(cookie);
    const headers = { cookie: `switchyard_session=${cookie}` };
    assert.equal((await callFromPage(page, 'GET', '/api/v1/sys/whoami', false)).status, 401, 'no header: refused (CSRF)');
    assert.equal((await request(`${adminUrl}/api/v1/sys/whoami`, { headers })).status, 401, 'no header: refused (CSRF)');
    assert.equal((await request(`${adminUrl}/api/v1/sys/whoami`, { headers: { ...headers, 'x-switchyard-console': '1' } })).status, 200);

    // providerLogout: the console goes on to the provider's logout, which sends it back to the console.
    const endSession = page.waitForRequest((r) => r.url().startsWith(`${provider.issuer}/session/end`) && new URL(r.url()).searchParams.has('id_token_hint'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await endSession;
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByTestId('oidc-signin').waitFor();
    assert.equal(new URL(page.url()).pathname, '/console/');
    assert.equal(await page.getByTestId('signin-error').count(), 0, 'a sign-out asked for is no error');
    const after = await request(`${adminUrl}/api/v1/default/config/list/route`, { headers: { ...headers, 'x-switchyard-console': '1' } });
    assert.deepEqual([after.status, (after.json as { code: string }).code], [401, 'Svc.Auth.Unauthenticated'], 'the old cookie is dead on the server');
    assert.equal(await sessionCookieOf(page), undefined, 'and gone from the browser');
    await page.context().close();
  });

  await t.test('bearer tokens keep working for automation; nothing secret reached the log', async () => {
    const who = await request(`${adminUrl}/api/v1/sys/whoami`, { token: root });
    assert.equal(who.status, 200);
    assert.equal((who.json as { kind: string }).kind, 'system');
    const ops = (await request(`${adminUrl}/api/v1/openapi.json`, { token: root })).json as { paths: Record<string, unknown> };
    for (const p of ['/api/v1/sys/oidc', '/api/v1/sys/oidc/login', '/api/v1/sys/oidc/callback', '/api/v1/sys/oidc/logout']) assert.ok(ops.paths[p], `${p} in the OpenAPI document`);

    const log = gw.stderr();
    assert.match(log, /console sign-in/);
    assert.ok(seen.filter(Boolean).length >= 4, 'codes and cookies were captured');
    for (const s of [...seen.filter(Boolean), CLIENT_SECRET]) assert.equal(log.includes(s), false, 'no code, session cookie or client secret in the log');
  });

  // Last: it spends this address's failed-authentication allowance (admin.authFailures, burst 20).
  await t.test('forged callbacks count as failed authentications: a throttled address gets 429 and the provider is not asked', async () => {
    const pending = Buffer.from(JSON.stringify({ state: 's', nonce: 'n', verifier: 'v'.repeat(43) })).toString('base64url');
    const query = new URLSearchParams({ code: 'forged', state: 's', iss: provider.issuer });
    const forged = () => request(`${adminUrl}/api/v1/sys/oidc/callback?${query}`, { headers: { cookie: `switchyard_oidc=${pending}` } });
    const tokenCalls = () => provider.hits.get('/token') ?? 0;
    const before = tokenCalls();
    const first = await forged();
    assert.deepEqual([first.status, (first.json as { code: string }).code], [401, 'Svc.Auth.SignInFailed'], 'the provider refused the forged code');
    assert.equal(tokenCalls(), before + 1);
    let answer = first;
    for (let i = 0; i < 30 && answer.status !== 429; i++) answer = await forged();
    assert.deepEqual([answer.status, (answer.json as { code: string }).code], [429, 'Svc.Auth.Throttled']);
    const spent = tokenCalls();
    assert.equal((await forged()).status, 429);
    assert.equal(tokenCalls(), spent, 'a throttled callback never reaches the provider');
  });
});
