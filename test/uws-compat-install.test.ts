import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

const root = fileURLToPath(new URL('..', import.meta.url));
const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
const [major = 0, minor = 0] = (glibc ?? '0.0').split('.').map(Number);
const oldGlibc = process.platform === 'linux' && glibc !== undefined && (major < 2 || (major === 2 && minor < 38));
/** The install step writes a copy on Linux x64 (the read loop) and below glibc 2.38 (the symbols). */
const copies = process.platform === 'linux' && glibc !== undefined && (process.arch === 'x64' || oldGlibc);
const skip = !copies && 'no copy is made here (arm64 with glibc 2.38 or newer, or not Linux)';

/** A project folder with the install step and the real node_modules, as `npm install` would run it. */
function project(t: { after(fn: () => void): void }, checksums?: (c: Record<string, Record<string, string>>) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'uws-install-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'scripts'));
  cpSync(join(root, 'scripts', 'uws-compat'), join(dir, 'scripts', 'uws-compat'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"name":"probe","private":true}');
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  if (checksums) {
    const file = join(dir, 'scripts', 'uws-compat', 'checksums.json');
    const c = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, string>>;
    checksums(c);
    writeFileSync(file, JSON.stringify(c));
  }
  return dir;
}

const run = (dir: string) => spawnSync(process.execPath, [join(dir, 'scripts', 'uws-compat', 'install.mjs')], { encoding: 'utf8' });
const binaryName = `uws_linux_${process.arch}_${process.versions.modules}.node`;

test('the install step writes a patched copy that loads, in the project folder, and leaves node_modules alone', { skip }, (t) => {
  const dir = project(t);
  const r = run(dir);
  assert.equal(r.status, 0, r.stderr);
  const copy = join(dir, '.uws-compat', binaryName);
  assert.ok(existsSync(copy), r.stdout);
  const load = spawnSync(process.execPath, ['-e', `if (typeof require(${JSON.stringify(copy)}).App !== 'function') process.exit(3)`], { encoding: 'utf8' });
  assert.equal(load.status, 0, load.stderr);
  if (oldGlibc) assert.match(r.stdout, /__isoc23_sscanf -> sscanf/);
  if (process.arch === 'x64') assert.match(r.stdout, /recv loop at 0x/);
  const pkgDir = dirname(createRequire(join(dir, 'package.json')).resolve('uWebSockets.js'));
  const version = (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
  const sums = JSON.parse(readFileSync(join(root, 'scripts', 'uws-compat', 'checksums.json'), 'utf8')) as Record<string, Record<string, string>>;
  const inPackage = createHash('sha256').update(readFileSync(join(pkgDir, binaryName))).digest('hex');
  assert.equal(inPackage, sums[version]![binaryName], 'the package binary is the registry one still');
});

test('an unknown binary stops the install with a clear error and writes nothing', { skip }, (t) => {
  const dir = project(t, (c) => {
    for (const v of Object.values(c)) v[binaryName] = '0'.repeat(64);
  });
  const r = run(dir);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /uws-compat: .*refusing to patch an unknown binary/);
  assert.equal(existsSync(join(dir, '.uws-compat', binaryName)), false);
});

test('a uWS build without a checksum is not patched: the install goes on, says why, and the node engine serves', { skip }, (t) => {
  const dir = project(t, (c) => {
    for (const k of Object.keys(c)) delete c[k];
  });
  const r = run(dir);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /uws-compat: uWebSockets\.js is unavailable here \(no checksum for .* in scripts\/uws-compat\/checksums\.json, so it is not patched\); the node engine will serve the data port/);
  assert.equal(existsSync(join(dir, '.uws-compat', binaryName)), false);
});
