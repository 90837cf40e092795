import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from './helpers/cli.js';
import { ROOT, startGateway, tempDir } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';

// Without NODE_TEST_CONTEXT a nested `node --test` (the package's npm test) reports as a run of its own.
const { NODE_TEST_CONTEXT: _ctx, ...plainEnv } = process.env;

function npm(dir: string, args: string[], timeoutMs: number) {
  const r = spawnSync('npm', args, { cwd: dir, env: plainEnv, encoding: 'utf8', timeout: timeoutMs });
  return { code: r.status, out: `${r.stdout}${r.stderr}${r.error ? String(r.error) : ''}` };
}

test('step new refuses a code the gateway would not load, and an existing folder', async (t) => {
  const dir = tempDir(t);
  for (const code of ['Bad_Code', 'x', '9lives', 'a'.repeat(64)]) {
    const r = await runCli(['step', 'new', code, '--dir', join(dir, 'p'), '--json']);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal((r.json as { code: string }).code, 'Cli.Input');
    assert.match(r.stderr, /is not a step code/);
  }
  mkdirSync(join(dir, 'taken'));
  const r = await runCli(['step', 'new', 'fine-code', '--dir', join(dir, 'taken')]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /already exists; step new never writes into an existing folder/);
  assert.equal(existsSync(join(dir, 'taken', 'package.json')), false);
});

test('step new writes a package whose npm test passes as generated, and a gateway loading it answers through it', { timeout: 300_000 }, async (t) => {
  const dir = join(tempDir(t), 'require-tenant');
  const made = await runCli(['step', 'new', 'require-tenant', '--dir', dir, '--json']);
  assert.equal(made.code, 0, made.stdout + made.stderr);
  const out = made.json as { dir: string; package: string; files: string[] };
  assert.equal(out.dir, dir);
  assert.equal(out.package, 'switchyard-step-require-tenant');
  assert.deepEqual(out.files, ['.gitignore', '.npmrc', 'README.md', 'package.json', 'src/index.ts', 'src/test/index.test.ts', 'tsconfig.json']);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string>; scripts: Record<string, string> };
  assert.equal(pkg.version, '0.1.0');
  assert.equal(pkg.dependencies.switchyard, `file:${ROOT.replace(/\/$/, '')}`);
  assert.equal(pkg.scripts.test, 'npm run build && node --test dist/test/');
  assert.match(readFileSync(join(dir, 'src', 'index.ts'), 'utf8'), /RequireTenant\.MissingHeader/);

  // The gateway dependency is this repository, linked: its own postinstall (uws-compat) is not the
  // package's to run, and the package's .npmrc says so (a root-owned global gateway would refuse it).
  assert.match(readFileSync(join(dir, '.npmrc'), 'utf8'), /^ignore-scripts=true$/m);
  const install = npm(dir, ['install'], 180_000); // exactly as its README says
  assert.equal(install.code, 0, install.out);
  const tested = npm(dir, ['test'], 120_000);
  assert.equal(tested.code, 0, tested.out);
  assert.match(tested.out, /^# pass 3$/m);
  assert.match(tested.out, /^# fail 0$/m);

  // The gateway side: worker.json steps.packages names the folder.
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: (c) => void (c.steps = { packages: [dir] }) });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'r', { cluster: 'up', pathPrefix: '/', steps: [{ code: 'require-tenant', settings: { require: 'x-tenant' } }] }],
  ]);
  const refused = await request(`${gw.dataUrl}/orders`);
  assert.equal(refused.status, 400, refused.text);
  assert.equal((refused.json as { code: string }).code, 'RequireTenant.MissingHeader');
  const passed = await request(`${gw.dataUrl}/orders`, { headers: { 'x-tenant': 'acme', 'x-require-tenant': 'forged' } });
  assert.equal(passed.status, 200, passed.text);
  assert.equal((passed.json as { headers: Record<string, string> }).headers['x-require-tenant'], 'passed');
});
