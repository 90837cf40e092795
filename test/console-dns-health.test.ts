/**
 * The console's cluster view of a cluster whose target is a DNS name: each address found is
 * a row of its own with its health, and the name's last resolution is shown, fail static
 * included once the DNS server stops answering.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { signedInPage } from './helpers/browser.js';
import { BOUNDED } from './helpers/wait.js';
import { startDns } from './helpers/dns-server.js';

test('the cluster view lists each address a DNS name gives and the name\'s state, fail static when the server stops', BOUNDED, async (t) => {
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const dns = await startDns(t);
  dns.zone.a.set('shop.test', ['127.0.0.2']);
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: (c) => void (c.discovery = { resolvers: [dns.address] }) });
  await apply(gw, [
    ['cluster', 'shop', { targets: [{ dns: 'shop.test', port, refreshSeconds: 1 }], healthCheck: { path: '/', intervalMs: 200 } }],
    ['route', 'shop', { cluster: 'shop', pathPrefix: '/shop' }],
  ]);
  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);
  await page.getByTestId('nav-clusters').click();
  await page.getByTestId('entity-shop').click();
  await page.getByRole('heading', { name: 'Health' }).waitFor();
  const target = `127.0.0.2:${port}`;
  await page.getByTestId(`health-state-${target}`).filter({ hasText: /^healthy$/ }).waitFor({ timeout: 8_000 });
  assert.match((await page.getByTestId(`health-row-${target}`).textContent()) ?? '', /DNS, weight 1/);
  await page.getByTestId('health-dns-state-shop.test').filter({ hasText: /^ok$/ }).waitFor({ timeout: 8_000 });
  assert.match((await page.getByTestId('health-dns-shop.test').textContent()) ?? '', new RegExp(target.replace(/\./g, '\\.')));
  await dns.stop();
  // The next resolution (1 s) fails; the view asks again every 2 s by itself.
  await page.getByTestId('health-dns-state-shop.test').filter({ hasText: /^fail static/ }).waitFor({ timeout: 10_000 });
  assert.match((await page.getByTestId(`health-state-${target}`).textContent()) ?? '', /^healthy$/);
});
