/**
 * The console renders what GET /api/v1/sys/console says for the signed-in identity:
 * navigation entries and gated controls. Checked for three identities, first on the
 * server's answer, then in headless Chromium.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { setEntity } from './helpers/admin.js';
import { issueKey } from './helpers/keys.js';
import { launchBrowser, newPage, signIn } from './helpers/browser.js';
import { BOUNDED } from './helpers/wait.js';

const ALL_VIEWS = ['overview', 'clusters', 'routes', 'chains', 'certificates', 'explain', 'publish', 'keys', 'plugins', 'audit'];

test('navigation and controls follow the server per identity', BOUNDED, async (t) => {
  const gw = await startGateway(t, {
    keys: [
      { id: 'root', scopes: ['*'] },
      { id: 'reader', scopes: ['config:read', 'publish:read'] },
    ],
  });
  await setEntity(gw, 'route', 'in-default', { directResponse: { statusCode: 200 } }, 'default');
  const sub = await issueKey(gw, gw.tokens.root!, 'acme', { name: 'console', scopes: ['*'] });
  const subToken = sub.token;
  const acme = (doc: unknown) => request(`${gw.adminUrl}/api/v1/acme/config/set/route/in-acme`, { method: 'POST', token: subToken, body: doc });
  assert.equal((await acme({ directResponse: { statusCode: 200 }, hosts: ['acme.example'] })).status, 200);

  const model = async (token: string) => {
    const r = await request(`${gw.adminUrl}/api/v1/sys/console`, { token });
    assert.equal(r.status, 200, r.text);
    return r.json as { tenant: string; tenantSelectable: boolean; nav: { id: string }[]; features: Record<string, string> };
  };

  await t.test("the server's answer for the three identities", async () => {
    const root = await model(gw.tokens.root!);
    assert.deepEqual(root.nav.map((n) => n.id), ALL_VIEWS);
    assert.ok(Object.values(root.features).every((s) => s === 'enabled'), JSON.stringify(root.features));
    assert.equal(root.tenantSelectable, true);

    const reader = await model(gw.tokens.reader!);
    assert.deepEqual(reader.nav.map((n) => n.id), ['clusters', 'routes', 'chains', 'certificates', 'explain', 'publish']);
    assert.equal(reader.features['config.set'], 'disabled');
    assert.equal(reader.features['publish.go'], 'disabled');
    assert.equal(reader.features['publish.dry-run'], 'enabled');
    assert.equal(reader.features['key.issue'], 'hidden');

    const tenantKey = await model(subToken);
    assert.equal(tenantKey.tenant, 'acme');
    assert.equal(tenantKey.tenantSelectable, false);
    assert.ok(!tenantKey.nav.some((n) => n.id === 'overview'), 'no instance-level view');
    assert.equal(tenantKey.features['config.set'], 'enabled');
    const asked = await request(`${gw.adminUrl}/api/v1/sys/console?tenant=default`, { token: subToken });
    assert.equal(asked.json.tenant, 'acme', 'a tenant key cannot ask for another tenant');
  });

  const browser = await launchBrowser(t);
  const navOf = async (page: import('playwright-core').Page) =>
    (await page.locator('[data-testid^="nav-"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')!.slice(4))));

  for (const [who, token] of [
    ['root', gw.tokens.root!],
    ['reader', gw.tokens.reader!],
    ['tenant sub-key', subToken],
  ] as const) {
    await t.test(`${who}: the console shows exactly the server's navigation and gates`, async () => {
      const m = await model(token);
      const page = await newPage(browser);
      await signIn(page, gw.adminUrl, token);
      assert.deepEqual(await navOf(page), m.nav.map((n) => n.id));

      await page.getByTestId('nav-routes').click();
      const save = page.getByTestId('new-entity');
      if (m.features['config.set'] === 'hidden') assert.equal(await save.count(), 0);
      else assert.equal(await save.isDisabled(), m.features['config.set'] === 'disabled', `${who}: New button state`);

      const links = page.getByTestId('route-list').locator('[data-testid^="entity-"]');
      await links.first().waitFor(); // the list loads after the view renders
      const routes = await links.allTextContents();
      if (m.tenant === 'acme') assert.deepEqual(routes, ['in-acme'], 'only its tenant\'s entities');
      else assert.deepEqual(routes, ['in-default']);

      // an entity's editor: the save button follows the same answer
      await page.getByTestId(`entity-${routes[0]}`).click();
      await page.getByTestId('doc-editor').waitFor();
      assert.equal(await page.getByTestId('entity-save').isDisabled(), m.features['config.set'] === 'disabled');

      // the certificates view: its New button follows the same answer
      await page.getByTestId('nav-certificates').click();
      await page.getByTestId('cert-list').waitFor();
      assert.equal(await page.getByTestId('new-cert').isDisabled(), m.features['config.set'] === 'disabled', `${who}: New certificate button state`);

      if (m.nav.some((n) => n.id === 'publish')) {
        await page.getByTestId('nav-publish').click();
        assert.equal(await page.getByTestId('publish-go').isDisabled(), m.features['publish.go'] === 'disabled');
        assert.equal(await page.getByTestId('dry-run').isDisabled(), false);
      }
      if (m.tenantSelectable) assert.equal(await page.getByTestId('tenant-input').count(), 1);
      else assert.equal(await page.getByTestId('tenant-fixed').textContent(), `Tenant ${m.tenant}`);

      // sign-out clears the token from session storage
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Admin token').waitFor();
      assert.equal(await page.evaluate(() => sessionStorage.length), 0);
      await page.context().close();
    });
  }
});
