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
