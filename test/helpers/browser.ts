import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from './gateway.js';

/** Debian's Chromium (scripts/install-test-packages.sh installs it; npm test and .ci/run call that). */
export const CHROMIUM = process.env.SWITCHYARD_CHROMIUM ?? '/usr/bin/chromium';

/** Screenshots land here (git-ignored; CI keeps them as artifacts). */
export const ARTIFACTS = join(ROOT, 'test-artifacts');

export async function launchBrowser(t: TestContext): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run scripts/install-test-packages.sh`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  t.after(() => browser.close());
  return browser;
}

/** A fresh page (its own session storage) at 1280×800 unless told otherwise. */
export async function newPage(browser: Browser, viewport = { width: 1280, height: 800 }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return page;
}

/** Opens the console and signs in with `token`. */
export async function signIn(page: Page, adminUrl: string, token: string): Promise<void> {
  await page.goto(`${adminUrl}/console/`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}

/** A browser for the test, a fresh 1280×800 page, signed in to the console with `token`. */
export async function signedInPage(t: TestContext, adminUrl: string, token: string): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchBrowser(t);
  const page = await newPage(browser);
  await signIn(page, adminUrl, token);
  return { browser, page };
}
