/**
 * The console's cluster view shows each target's health as the node's checks see it and
 * keeps it current by itself: a stopped target reads unhealthy with no reload and no
 * click. A cluster not published shows the server's error; a key the server's answer does
 * not allow the read gets no health section rather than a 403.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, setEntity } from './helpers/admin.js';
import { newPage, screenshot, signIn, signedInPage } from './helpers/browser.js';
import { sendMany } from './helpers/load.js';
import { BOUNDED } from './helpers/wait.js';

const CHECK = { path: '/health', intervalMs: 200, timeoutMs: 150, healthyThreshold: 2, unhealthyThreshold: 2 };

/** Two failed probes (~400 ms) plus one refresh (2 s) plus slack on a loaded machine. */
const NOTICED_WITHIN_MS = 8_000;

async function openCluster(page: Page, name: string): Promise<void> {
  await page.getByTestId('nav-clusters').click();
  await page.getByTestId(`entity-${name}`).click();
  await page.getByRole('heading', { name: 'Health' }).waitFor();
}

/** Waits (bounded) until the target's state cell reads exactly `state`. */
function stateReads(page: Page, target: string, state: string, timeout = NOTICED_WITHIN_MS): Promise<void> {
  return page.getByTestId(`health-state-${target}`).filter({ hasText: new RegExp(`^${state}$`) }).waitFor({ timeout });
}

test('the cluster view shows each target healthy, and a stopped one unhealthy by itself within seconds', BOUNDED, async (t) => {
  const a = await startUpstream(t);
  const b = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 2 });
  await apply(gw, [
    ['cluster', 'shop', { targets: [a.target, b.target], healthCheck: CHECK }],
    ['route', 'shop', { cluster: 'shop', pathPrefix: '/shop' }],
  ]);
  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);
  await openCluster(page, 'shop');

  const rows = page.getByTestId('health-list').locator('tbody tr');
  await rows.nth(1).waitFor();
  assert.equal(await rows.count(), 2);
  for (const target of [a.target, b.target]) {
    await page.getByTestId(`health-row-${target}`).waitFor();
    await stateReads(page, target, 'healthy');
    // probed, not just the initial state: a last check time (digits), later if not at once
    await page.getByTestId(`health-checked-${target}`).filter({ hasText: /\d/ }).waitFor({ timeout: NOTICED_WITHIN_MS });
    assert.match((await page.getByTestId(`health-counts-${target}`).textContent()) ?? '', /^\d+ \/ 0$/);
    // a number once the server reports in-flight requests, a dash before
    assert.match((await page.getByTestId(`health-inflight-${target}`).textContent()) ?? '', /^(\d+|—)$/);
  }
  assert.match((await page.getByTestId('health-check').textContent()) ?? '', /GET \/health every 200 ms/);

  // a marker in the page's window: gone if anything reloaded the page
  await page.evaluate(() => ((window as unknown as { healthMarker: number }).healthMarker = 1));
  await b.close();
  const stoppedAt = Date.now();
  await stateReads(page, b.target, 'unhealthy');
  t.diagnostic(`the stopped target read unhealthy after ${Date.now() - stoppedAt} ms`);
  assert.equal(await page.getByTestId(`health-state-${a.target}`).textContent(), 'healthy');
  assert.match((await page.getByTestId(`health-counts-${b.target}`).textContent()) ?? '', /^0 \/ [1-9]\d*$/);
  assert.equal(await page.evaluate(() => (window as unknown as { healthMarker?: number }).healthMarker), 1, 'the page was not reloaded');
  await page.getByTestId('health-list').scrollIntoViewIfNeeded();
  await screenshot(page, 'cluster-health');
});

test("a cluster not published shows the server's 404, and its targets once published; a key that may not read health sees no section, no 403", BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY, { id: 'config-only', scopes: ['config:read'] }] });
  await setEntity(gw, 'cluster', 'draft-only', { targets: [up.target] });
  const { browser, page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);
  await openCluster(page, 'draft-only');

  const error = page.getByTestId('health-error');
  await error.waitFor();
  assert.match((await error.textContent()) ?? '', /^Svc\.Config\.NotFound: No published cluster draft-only in tenant default$/);
  assert.equal(await page.getByTestId('health-list').count(), 0);
  // the rest of the view still works: the editor shows the draft
  await page.getByTestId('entity-state').filter({ hasText: /State: draft/ }).waitFor();

  // published meanwhile (by someone else): the next refresh replaces the error with the targets
  await apply(gw, [['route', 'r', { cluster: 'draft-only', pathPrefix: '/r' }]]);
  await page.getByTestId('health-refresh').click();
  await stateReads(page, up.target, 'unchecked');
  assert.equal(await error.count(), 0);
  assert.match((await page.getByTestId('health-check').textContent()) ?? '', /No health check/);

  const reader = await newPage(browser);
  await signIn(reader, gw.adminUrl, gw.tokens['config-only']!);
  await reader.getByTestId('nav-clusters').click();
  await reader.getByTestId('entity-draft-only').click();
  // the editor's read has answered; a health section would have been drawn with it
  await reader.getByTestId('entity-state').filter({ hasText: /State: published/ }).waitFor();
  assert.equal(await reader.getByRole('heading', { name: 'Health' }).count(), 0);
  assert.equal(await reader.getByRole('alert').count(), 0, 'no Svc.Auth.Scope error in the cluster view');
});

test('a target ejected as an outlier reads "ejected until <time>" beside its state', BOUNDED, async (t) => {
  const a = await startUpstream(t);
  const b = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const outlier = { consecutiveFailures: 2, ejectMs: 60_000, maxEjectedPercent: 50 };
  await apply(gw, [['cluster', 'c', { targets: [a.target, b.target], outlier }], ['route', 'all', { cluster: 'c' }]]);
  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);
  await openCluster(page, 'c');
  await stateReads(page, a.target, 'unchecked');
  await stateReads(page, b.target, 'unchecked');

  // both answer 503 (the upstream helper obeys x-up-status); at most half of two is ejected
  const statuses = await sendMany(gw.dataPort, 20, 2, () => ({ 'x-up-status': '503' }));
  assert.ok(statuses.every((s) => s === 503));
  const ejected = page.getByTestId('health-list').locator('td').filter({ hasText: /^unchecked, ejected until .*\d/ });
  await ejected.first().waitFor({ timeout: NOTICED_WITHIN_MS });
  assert.equal(await ejected.count(), 1);
  assert.equal(await page.getByTestId('health-list').locator('td').filter({ hasText: /^unchecked$/ }).count(), 1);
  assert.match((await page.getByTestId('health-check').textContent()) ?? '', /ejection after 2 failures in a row, for 60000 ms/);
});
