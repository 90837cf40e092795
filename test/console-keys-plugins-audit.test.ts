/** The console's Keys, Plugins and Audit views drive the same operations as REST. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { signedInPage } from './helpers/browser.js';
import { BOUNDED } from './helpers/wait.js';

test('keys: revoke and delete; plugins: disable and enable; audit: the trail of those writes', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [{ id: 'root', scopes: ['*'] }] });
  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);

  await page.getByTestId('nav-keys').click();
  await page.getByTestId('key-name').fill('deploy');
  await page.getByTestId('key-scopes').fill('config:read');
  await page.getByTestId('key-ttl').fill('3600');
  await page.getByTestId('key-issue').click();
  const token = (await page.getByTestId('key-plaintext').textContent())!;
  // Regression: the form kept the issued key's fields (its reset ran after an await, on a null target).
  assert.deepEqual([await page.getByTestId('key-name').inputValue(), await page.getByTestId('key-ttl').inputValue()], ['', '']);
  assert.equal((await request(`${gw.adminUrl}/api/v1/default/config/list/route`, { token })).status, 200);

  // escalation is refused by the server and the console shows its answer
  await page.getByTestId('key-name').fill('too-much');
  await page.getByTestId('key-scopes').fill('nope:read');
  await page.getByTestId('key-issue').click();
  assert.match((await page.getByTestId('key-error').textContent()) ?? '', /Svc\.Key\.Invalid/);

  const row = page.locator('[data-testid^="key-row-"]').first();
  await page.getByRole('button', { name: 'Refresh' }).click();
  await row.getByRole('button', { name: 'Revoke' }).click();
  await row.getByRole('cell', { name: 'revoked', exact: true }).waitFor();
  assert.equal((await request(`${gw.adminUrl}/api/v1/sys/whoami`, { token })).status, 401);
  await row.getByRole('button', { name: 'Delete' }).click();
  await page.locator('[data-testid^="key-row-"]').first().waitFor({ state: 'detached' });

  await page.getByTestId('nav-plugins').click();
  await page.getByTestId('plugin-toggle-cors').click();
  await page.getByTestId('plugin-state-cors').filter({ hasText: 'disabled' }).waitFor();
  const listed = await request(`${gw.adminUrl}/api/v1/default/plugin/list`, { token: gw.tokens.root });
  assert.equal(listed.json.items.find((s: { code: string }) => s.code === 'cors').enabled, false);
  await page.getByTestId('plugin-toggle-cors').click();
  await page.getByTestId('plugin-state-cors').filter({ hasText: 'enabled' }).waitFor();

  await page.getByTestId('nav-audit').click();
  const ops = page.getByTestId('audit-list').locator('tbody tr td:nth-child(3)');
  await ops.first().waitFor();
  assert.deepEqual(await ops.allTextContents(), ['plugin.enable', 'plugin.disable', 'key.delete', 'key.revoke', 'key.issue', 'key.issue']);
});
