/**
 * The console's Certificates view end to end: paste a certificate and its key, save,
 * publish; the view shows what the certificate says (checked against node:crypto) and
 * the page never holds the key once it is saved.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { startGateway } from './helpers/gateway.js';
import { getEntity } from './helpers/admin.js';
import { issue, makePki } from './helpers/certs.js';
import { screenshot, signedInPage } from './helpers/browser.js';
import { BOUNDED } from './helpers/wait.js';
import type { Page } from 'playwright-core';

const DAY = 86_400_000;

/** Opens a certificate's view from the list (or a new one by name) and waits for its form. */
async function openCert(page: Page, name: string, isNew: boolean): Promise<void> {
  await page.getByTestId('nav-certificates').click();
  await page.getByTestId('cert-list').waitFor(); // the view switched (the hash change is asynchronous)
  if (isNew) {
    await page.getByTestId('new-cert-name').fill(name);
    await page.getByTestId('new-cert').click();
  } else {
    await page.getByTestId(`cert-link-${name}`).click();
  }
  await page.getByRole('heading', { name: `Certificate ${name}` }).waitFor();
  await page.getByTestId('cert-certificate').waitFor(); // the form shows once the entity is loaded
}

const daysLeft = (x: X509Certificate) => Math.floor((Date.parse(x.validTo) - Date.now()) / DAY);

test('add a certificate in the console and publish it: its view shows what the certificate says, never the key', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [{ id: 'root', scopes: ['*'] }] });
  const pki = makePki(t);
  const site = issue(pki, ['shop.example', 'www.shop.example']);
  const x509 = new X509Certificate(site.certificate);
  const keyLines = site.privateKey.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----'));
  assert.ok(keyLines.length >= 3, 'the key has a base64 body to look for');
  const { page } = await signedInPage(t, gw.adminUrl, gw.tokens.root!);

  await openCert(page, 'shop', true);
  assert.equal(await page.getByTestId('cert-state').textContent(), 'New: not saved yet');
  assert.equal(await page.getByTestId('cert-private-key').inputValue(), '', 'the key field starts empty');

  // the server's validation error is shown with its field path
  await page.getByTestId('cert-certificate').fill(site.certificate);
  await page.getByTestId('cert-private-key').fill('not a key');
  await page.getByTestId('cert-save').click();
  const err = page.getByTestId('cert-error');
  await err.waitFor();
  assert.match((await err.textContent()) ?? '', /Svc\.Config\.Invalid.*\/privateKey/s);

  await page.getByTestId('cert-private-key').fill(site.privateKey);
  await page.getByTestId('cert-save').click();
  await page.getByTestId('cert-saved').waitFor();
  assert.equal(await page.getByTestId('cert-private-key').inputValue(), '', 'the key field is cleared once saved');
  assert.equal(await page.getByTestId('cert-certificate').inputValue(), '');
  await page.getByTestId('cert-draft').waitFor(); // the view reloads the entity after a save
  assert.equal(await page.getByTestId('cert-draft').getByTestId('cert-fingerprint').textContent(), x509.fingerprint256);
  assert.equal(await page.getByTestId('cert-published').count(), 0, 'not published yet');

  await page.getByTestId('nav-publish').click();
  await page.getByTestId('dry-run').click();
  await page.getByTestId('dry-run-result').waitFor();
  assert.deepEqual(await page.getByTestId('planned').locator('li').allTextContents(), ['cert/shop']);
  await page.getByTestId('publish-go').click();
  await page.getByTestId('published').waitFor();
  const stored = await getEntity(gw, 'cert', 'shop');
  assert.equal(stored.published?.generation, Number(await page.getByTestId('published-generation').textContent()));

  await openCert(page, 'shop', false);
  const pub = page.getByTestId('cert-published');
  await pub.waitFor();
  assert.equal(await page.getByTestId('cert-draft').count(), 0, 'the publish took the draft');
  assert.equal(await pub.getByTestId('cert-subject').textContent(), x509.subject.replace(/\n/g, ', '));
  assert.equal(await pub.getByTestId('cert-dns').textContent(), 'shop.example, www.shop.example');
  assert.equal(await pub.getByTestId('cert-issuer').textContent(), 'CN=Switchyard Test CA');
  assert.equal(await pub.getByTestId('cert-fingerprint').textContent(), x509.fingerprint256);
  assert.equal(await pub.getByTestId('cert-key-type').textContent(), x509.publicKey.asymmetricKeyType);
  assert.equal(await pub.getByTestId('cert-default').textContent(), 'no');
  const expiry = pub.getByTestId('cert-expiry');
  assert.match((await expiry.textContent()) ?? '', new RegExp(`\\(expires in ${daysLeft(x509)} days\\)$`));
  assert.equal(await expiry.getAttribute('class'), null, '90 days left is not marked');
  assert.equal(await page.getByTestId('cert-private-key').inputValue(), '', 'the key field is empty when the view opens');
  const row = (await page.getByTestId('cert-row-shop').textContent()) ?? '';
  assert.match(row, /published.*shop\.example, www\.shop\.example/);
  await screenshot(page, 'certificates');

  // a certificate expiring in 10 days is marked, as the dry-run warns of it
  const soon = issue(pki, ['soon.example'], { to: new Date(Date.now() + 10.5 * DAY) });
  await openCert(page, 'soon', true);
  await page.getByTestId('cert-certificate').fill(soon.certificate);
  await page.getByTestId('cert-private-key').fill(soon.privateKey);
  await page.getByTestId('cert-hosts').fill('soon.example');
  await page.getByTestId('cert-save').click();
  await page.getByTestId('cert-saved').waitFor();
  const soonExpiry = page.getByTestId('cert-draft').getByTestId('cert-expiry');
  await soonExpiry.waitFor();
  assert.match((await soonExpiry.textContent()) ?? '', /\(expires in 10 days\)$/);
  assert.equal(await soonExpiry.getAttribute('class'), 'expiring');
  assert.equal(await page.getByTestId('cert-draft').getByTestId('cert-hosts-served').textContent(), 'soon.example');

  const html = await page.content();
  for (const line of [...keyLines, ...soon.privateKey.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----'))]) {
    assert.ok(!html.includes(line), `the page holds a line of a private key: ${line.slice(0, 8)}…`);
  }
  const webStorage = await page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }));
  assert.ok(!keyLines.some((l) => webStorage.includes(l)), 'not in web storage');
});
