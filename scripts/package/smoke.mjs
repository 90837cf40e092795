#!/usr/bin/env node
// The package as a user gets it: `npm pack`, a global install of the tarball into a prefix of
// its own (dependencies from the registry, install scripts run, no devDependencies), then the
// installed CLI's first hour: init, run, a cluster and a route set and published with the
// printed token, one request proxied to an upstream. Everything lives in a temporary folder;
// ports are chosen at run time; each step has a deadline; only the gateway this script started
// is stopped. Exit 0 when every step passed. Usage: node scripts/package/smoke.mjs
import { freePort, sh as run } from '../runtime-smoke/proc.mjs';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const started = Date.now();
const work = mkdtempSync(join(tmpdir(), 'switchyard-package-'));
const prefix = join(work, 'prefix');
const bin = join(prefix, 'bin', 'switchyard');
/**
 * What the tarball may hold: the built gateway (with the declarations of `switchyard/step` and
 * `switchyard/testing`), its example config, the install step, `step new`'s templates, and the
 * CLI's oclif manifest (written by the build: a command loads only its own code).
 */
const SHIPPED = /^(LICENSE|README\.md|package\.json|npm-shrinkwrap\.json|oclif\.manifest\.json|bin\/run\.js|config\/[^/]+\.json|scripts\/uws-compat\/[^/]+\.(mjs|json)|dist\/.+\.(js|d\.ts|json|html|css|svg|woff2?)|templates\/step-package\/.+\.tmpl)$/;
/** The registry install takes about a minute and a half here (better-sqlite3 may compile). */
const INSTALL_MS = 10 * 60_000;
const STEP_MS = 60_000;

let gateway;
let upstream;

const log = (line) => process.stdout.write(`package-smoke: ${line} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);

/** A command in this smoke's folder within a step's time (runtime-smoke/proc.mjs: its own process group, stopped on timeout). */
const sh = (cmd, args, options = {}) => run(cmd, args, { cwd: work, timeoutMs: STEP_MS, ...options });

async function pack() {
  const { out } = await sh('npm', ['pack', '--json', '--pack-destination', work], { cwd: root, timeoutMs: 5 * 60_000 });
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  const stray = info.files.map((f) => f.path).filter((p) => !SHIPPED.test(p));
  if (stray.length > 0) throw new Error(`the tarball holds files it should not ship:\n${stray.join('\n')}`);
  const musts = ['bin/run.js', 'oclif.manifest.json', 'dist/cli/commands/run.js', 'dist/console/index.html', 'scripts/uws-compat/install.mjs', 'scripts/uws-compat/checksums.json', 'npm-shrinkwrap.json'];
  for (const must of [...musts, 'dist/sdk/step.d.ts', 'dist/sdk/testing.d.ts', 'templates/step-package/src/index.ts.tmpl']) {
    if (!info.files.some((f) => f.path === must)) throw new Error(`the tarball lacks ${must}`);
  }
  if (existsSync(join(root, 'npm-shrinkwrap.json'))) throw new Error('postpack left npm-shrinkwrap.json in the project folder');
  log(`packed ${info.filename}: ${info.entryCount} files, ${(info.size / 1024).toFixed(0)} KiB (${(info.unpackedSize / 1024).toFixed(0)} KiB unpacked)`);
  return join(work, info.filename);
}

async function install(tarball) {
  // The plain command a user types (`npm install -g --prefix P ./switchyard-*.tgz`): npm 11.19
  // runs the install scripts of a global install and only warns that they were not allowed by
  // name (README: --allow-scripts). That both ran is proved below (.uws-compat) and by `run`.
  const { err } = await sh('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=warn', tarball], { timeoutMs: INSTALL_MS });
  const warned = err.split('\n').find((l) => /install-scripts|allow-scripts/.test(l));
  if (warned !== undefined) log(`npm warned about install scripts: ${warned.trim()}`);
  const pkg = join(prefix, 'lib', 'node_modules', 'switchyard');
  const deps = readdirSync(join(pkg, 'node_modules'));
  const dev = ['typescript', 'vite', 'eslint', 'tsx', 'react', 'playwright-core'].filter((d) => deps.includes(d));
  if (dev.length > 0) throw new Error(`devDependencies were installed: ${dev.join(', ')}`);
  if (existsSync(join(pkg, 'src')) || existsSync(join(pkg, 'test'))) throw new Error('sources or tests were installed');
  const compat = existsSync(join(pkg, '.uws-compat')) ? readdirSync(join(pkg, '.uws-compat')).join(', ') : 'none';
  if (process.platform === 'linux' && process.arch === 'x64' && compat === 'none') throw new Error('the postinstall step wrote no .uws-compat copy');
  log(`installed into ${prefix} (uws-compat copy: ${compat})`);
}

async function firstHour() {
  const [dataPort, adminPort] = [await freePort(), await freePort()];
  const dir = join(work, 'x');
  const init = JSON.parse((await sh(bin, ['init', '--dir', dir, '--port', String(dataPort), '--admin-port', String(adminPort), '--json'])).out);
  log(`init wrote ${init.config}`);

  const env = { ...process.env, [init.tokenEnv]: init.token };
  gateway = spawn(bin, ['run', '--config', init.config], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  gateway.stderr.setEncoding('utf8').on('data', (d) => (err = (err + d).slice(-4000)));
  await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ready line within ${STEP_MS} ms\n${out}\n${err}`)), STEP_MS);
    gateway.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      if (/^switchyard ready /m.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    gateway.once('exit', (code) => reject(new Error(`switchyard run exited (${code}) before ready\n${out}\n${err}`)));
  });
  gateway.stdout.resume();
  log(`switchyard run is ready (pid ${gateway.pid})`);

  upstream = createServer((req, res) => res.end(`upstream saw ${req.method} ${req.url}`));
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const cli = { env: { ...process.env, SWITCHYARD_ADMIN: init.admin, SWITCHYARD_TOKEN: init.token } };
  await sh(bin, ['config', 'set', 'cluster', 'api'], { ...cli, input: JSON.stringify({ targets: [`127.0.0.1:${upstream.address().port}`] }) });
  await sh(bin, ['config', 'set', 'route', 'api'], { ...cli, input: JSON.stringify({ cluster: 'api', pathPrefix: '/api' }) });
  const go = JSON.parse((await sh(bin, ['publish', 'go'], cli)).out);
  if (go.ok !== true) throw new Error(`publish go: ${JSON.stringify(go)}`);
  log(`published generation ${go.generation}`);

  const res = await fetch(`http://127.0.0.1:${dataPort}/api/users?page=2`, { signal: AbortSignal.timeout(STEP_MS) });
  const body = await res.text();
  if (res.status !== 200 || body !== 'upstream saw GET /api/users?page=2') throw new Error(`proxied request: ${res.status} ${body}`);
  log('a request was proxied to the upstream');
  const consoleRes = await fetch(`${init.admin}/console/`, { signal: AbortSignal.timeout(STEP_MS) });
  if (consoleRes.status !== 200 || !(await consoleRes.text()).includes('<div id="root">')) throw new Error(`the console: ${consoleRes.status}`);
  log('the admin port serves the console');
}

/** Stops the gateway this script started (SIGTERM drains it; SIGKILL after 15 s), then removes the folder. */
async function cleanUp() {
  if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
    const exited = new Promise((resolve) => gateway.once('exit', resolve));
    gateway.kill('SIGTERM');
    const timer = setTimeout(() => gateway.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  upstream?.closeAllConnections();
  upstream?.close();
  rmSync(work, { recursive: true, force: true });
}

// Stopped from outside (Ctrl-C, the CI's timeout): the gateway and the folder go too.
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    process.stderr.write(`package-smoke: ${sig}, cleaning up\n`);
    void cleanUp().finally(() => process.exit(1));
  });
}

try {
  await install(await pack());
  await firstHour();
  log('passed');
} catch (e) {
  process.exitCode = 1;
  process.stderr.write(`package-smoke: FAILED: ${e.stack ?? e}\n`);
} finally {
  await cleanUp();
}
