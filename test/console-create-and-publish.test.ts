/**
 * The console end to end: create a cluster and a route, dry-run, publish, and the data
 * port serves the route. Also keeps the screenshots docs/console.md shows.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { newPage, screenshot, signIn, signedInPage } from './helpers/browser.js';
import { BOUNDED } from './helpers/wait.js';
import type { Page } from 'playwright-core';

const KIND_OF: Record<string, string> = { clusters: 'cluster', routes: 'route', chains: 'orch' };

async function writeEntity(page: Page, view: string, name: string, doc: unknown): Promise<void> {
  await page.getByTestId(`nav-${view}`).click();
  await page.getByTestId(`${KIND_OF[view]}-list`).waitFor(); // the view switched (the hash change is asynchronous)
  await page.getByTestId('new-name').fill(name);
  await page.getByTestId('new-entity').click();
  await page.getByRole('heading', { name: `${KIND_OF[view]} ${name}` }).waitFor();
  await page.getByTestId('doc-editor').fill(JSON.stringify(doc, null, 2)); // shown once the document is loaded
  await page.getByTestId('entity-save').click();
  await page.getByTestId('entity-saved').waitFor();
}

test('create a cluster and a route in the console, dry-run, publish: the data port serves it', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [{ id: 'root', scopes: ['*'] }], workers: 2 });
  const { browser, page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);

  await writeEntity(page, 'clusters', 'shop', { targets: [up.target] });
  await writeEntity(page, 'routes', 'shop', { cluster: 'shop', pathPrefix: '/shop' });
  // the editor reloads the entity after a save: wait for its new state
  await page.getByTestId('entity-state').filter({ hasText: /State: draft/ }).waitFor();

  // a server-side validation error is shown next to the editor, with the field path
  await page.getByTestId('doc-editor').fill(JSON.stringify({ cluster: 'shop', pathPrefix: 'no-slash' }));
  await page.getByTestId('entity-save').click();
  const err = page.getByTestId('entity-error');
  await err.waitFor();
  assert.match((await err.textContent()) ?? '', /Svc\.Config\.Invalid.*\/pathPrefix/s);

  await page.getByTestId('nav-publish').click();
  await page.getByTestId('dry-run').click();
  await page.getByTestId('dry-run-result').waitFor();
  assert.deepEqual((await page.getByTestId('planned').locator('li').allTextContents()).sort(), ['cluster/shop', 'route/shop']);
  await screenshot(page, 'publish');

  await page.getByTestId('publish-go').click();
  await page.getByTestId('published').waitFor();
  assert.equal(await page.getByTestId('published-generation').textContent(), '1');

  const served = await request(`${gw.dataUrl}/shop/items?x=1`);
  assert.equal(served.status, 200, served.text);
  assert.equal(up.requests.at(-1)?.url, '/shop/items?x=1');

  await page.getByTestId('nav-overview').click();
  assert.equal(await page.getByTestId('current-generation').textContent(), '1');
  assert.equal(await page.getByTestId('workers').locator('tbody tr').count(), 2);
  for (const slot of [0, 1]) {
    // each worker's open connections, and the generations it serves with their requests in flight
    assert.match((await page.getByTestId(`worker-connections-${slot}`).textContent()) ?? '', /^\d+$/);
    assert.equal(await page.getByTestId(`worker-generations-${slot}`).textContent(), '1 (0)');
  }
  await screenshot(page, 'overview');

  // the same view at 1920×1080 has everything on screen
  const wide = await newPage(browser, { width: 1920, height: 1080 });
  await signIn(wide, gw.adminUrl, gw.tokens.root!);
  assert.ok(await wide.getByTestId('nav-audit').isVisible());
});

test('issue a key in the console: the plaintext is shown once, never after a reload', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [{ id: 'root', scopes: ['*'] }] });
  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);
  await page.getByTestId('nav-keys').click();
  await page.getByTestId('key-name').fill('ci');
  await page.getByTestId('key-scopes').fill('config:read, publish:read');
  await page.getByTestId('key-issue').click();
  const plaintext = (await page.getByTestId('key-plaintext').textContent())!;
  assert.match(plaintext, /^syk_[0-9A-Za-z]{38}$/);
  const who = await request(`${gw.adminUrl}/api/v1/sys/whoami`, { token: plaintext });
  assert.equal(who.status, 200);
  assert.deepEqual(who.json.scopes, ['config:read', 'publish:read']);

  await page.reload();
  await page.getByTestId('key-list').locator('tbody tr').first().waitFor();
  const html = await page.content();
  assert.ok(!html.includes(plaintext) && !html.includes(plaintext.slice(4, 36)), 'not in the page after a reload');
  const stored = await page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }));
  assert.ok(!stored.includes(plaintext.slice(4, 36)), 'not in web storage');
  assert.equal(await page.getByTestId('key-plaintext').count(), 0);
  assert.equal(await page.getByTestId('key-list').locator('tbody tr').count(), 1);
});
