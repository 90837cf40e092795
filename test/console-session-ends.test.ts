/**
 * The console follows the server's word on the session: a token the server stops
 * accepting signs the tab out at the next call, and a tenant the server refuses is never
 * kept. Regressions: a key revoked mid-session left every control live (each click then
 * failed with 401), and a refused tenant name was stored at once, so the tab (even after
 * a reload) showed only an error, with no sign-out and no tenant field.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { signedInPage } from './helpers/browser.js';
import { issueKey, revokeKeyRaw } from './helpers/keys.js';
import { BOUNDED } from './helpers/wait.js';
import { request } from './helpers/http.js';

test('a key revoked mid-session signs the console out at its next call, saying why', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [{ id: 'root', scopes: ['*'] }] });
  const key = await issueKey(gw, gw.tokens.root!, 'default', { name: 'operator', scopes: ['config:read', 'key:read'] });
  const { page } = await signedInPage(t, gw.adminUrl, key.token);
  assert.equal((await revokeKeyRaw(gw, gw.tokens.root!, 'default', key.id)).status, 200);

  await page.getByTestId('nav-keys').click(); // the view's first call gets a 401
  await page.getByLabel('Admin token').waitFor();
  assert.match((await page.getByTestId('signin-error').textContent()) ?? '', /Svc\.Auth\.Unauthenticated/);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('switchyard.token')), null, 'the refused token is gone from the tab');
});

test('a tenant the server refuses is not kept: the console stays on the last good tenant, also after a reload', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [{ id: 'root', scopes: ['*'] }] });
  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);
  await page.getByTestId('tenant-input').fill('acme');
  await page.getByRole('button', { name: 'Switch' }).click();
  await page.waitForFunction(() => sessionStorage.getItem('switchyard.tenant') === 'acme');

  await page.getByTestId('tenant-input').fill('Acme Corp');
  await page.getByRole('button', { name: 'Switch' }).click();
  await page.getByRole('alert').filter({ hasText: 'Invalid tenant name' }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('switchyard.tenant')), 'acme');

  await page.reload();
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
  assert.equal(await page.getByTestId('tenant-input').inputValue(), 'acme');
  assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 1);
});

/**
 * Regression: the overview always read the publish history and the designer the step
 * catalogue, reads the server's answer did not cover: a key with cluster:read alone got a
 * 403 on its overview, and one without plugin:read saw every node badged "unknown step".
 */
test('views make only the reads the server’s answer allows: no 403 on the overview, no false "unknown step"', BOUNDED, async (t) => {
  const gw = await startGateway(t, {
    keys: [
      { id: 'root', scopes: ['*'] },
      { id: 'status-only', scopes: ['cluster:read'] },
      { id: 'config-reader', scopes: ['config:read'] },
    ],
  });
  const chain = { nodes: [{ id: 'e', step: 'echo', settings: {} }], links: [] };
  const set = await request(`${gw.adminUrl}/api/v1/default/config/set/orch/dbg`, { method: 'POST', token: gw.tokens.root, body: chain });
  assert.equal(set.status, 200, set.text);

  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens['status-only']!);
  await page.getByTestId('current-generation').waitFor();
  assert.equal(await page.getByText('Last publishes of').count(), 0);
  assert.equal(await page.getByRole('alert').count(), 0, 'no error on the overview');

  const reader = await signedInPage(t, gw.adminUrl, gw.tokens['config-reader']!);
  await reader.page.getByTestId('nav-chains').click();
  await reader.page.getByTestId('entity-dbg').click();
  await reader.page.getByTestId('open-designer').click();
  await reader.page.getByTestId('palette-unavailable').waitFor();
  await reader.page.getByTestId('node-e').waitFor();
  assert.equal(await reader.page.getByText('unknown step').count(), 0);
  assert.equal(await reader.page.getByRole('alert').count(), 0, 'no Svc.Auth.Scope error in the designer');
});

/** Regression: a staged delete showed as a plain published entity, and a designer Save cancelled it unannounced. */
test('a staged removal shows in the editor and the designer', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [{ id: 'root', scopes: ['*'] }] });
  const token = gw.tokens.root!;
  const chain = { nodes: [{ id: 'e', step: 'echo', settings: {} }], links: [] };
  assert.equal((await request(`${gw.adminUrl}/api/v1/default/config/set/orch/old`, { method: 'POST', token, body: chain })).status, 200);
  assert.equal((await request(`${gw.adminUrl}/api/v1/default/publish/go`, { method: 'POST', token, body: {} })).status, 200);
  assert.equal((await request(`${gw.adminUrl}/api/v1/default/config/delete/orch/old`, { method: 'POST', token, body: {} })).status, 200);

  const { page } = await signedInPage(t, gw.adminUrl, token);
  await page.getByTestId('nav-chains').click();
  await page.getByTestId('entity-old').click();
  await page.getByTestId('entity-removal-staged').waitFor();
  await page.getByTestId('open-designer').click();
  const badge = page.getByTestId('designer-source');
  await badge.waitFor();
  assert.match((await badge.textContent()) ?? '', /removal staged/);
});

/** Regression: with the admin port gone, every error read only the browser's "Failed to fetch". */
test('with the admin port gone, the console says it cannot reach it', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [{ id: 'root', scopes: ['*'] }] });
  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);
  await page.getByTestId('current-generation').waitFor();
  const stopped = await gw.stop('SIGTERM');
  assert.equal(stopped.code, 0);
  await page.getByRole('button', { name: 'Refresh' }).click();
  const alert = page.getByRole('alert').filter({ hasText: 'Console.Unreachable' });
  await alert.first().waitFor();
  assert.match((await alert.first().textContent()) ?? '', /admin port could not be reached/);
});
