import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The postinstall as `npm ci` runs it, in a project of its own whose uWebSockets.js package
// and checksums the test writes: only a binary that is not the one its checksum names fails.
const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
const patches = process.platform === 'linux' && process.arch === 'x64' && glibc !== undefined;
const name = `uws_linux_${process.arch}_${process.versions.modules}.node`;

function project(t: { after(fn: () => void): void }, version: string, binary: Buffer | null, checksum: string | null) {
  const root = mkdtempSync(join(tmpdir(), 'uws-install-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  cpSync(new URL('../../scripts/uws-compat', import.meta.url), join(root, 'scripts', 'uws-compat'), { recursive: true });
  writeFileSync(join(root, 'scripts', 'uws-compat', 'checksums.json'), JSON.stringify(checksum === null ? {} : { [version]: { [name]: checksum } }));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'p', version: '1.0.0' }));
  const pkg = join(root, 'node_modules', 'uWebSockets.js');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'uWebSockets.js', version, main: 'uws.js' }));
  writeFileSync(join(pkg, 'uws.js'), '');
  if (binary) writeFileSync(join(pkg, name), binary);
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'uws-compat', 'install.mjs')], { encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const skip = !patches && 'the postinstall patches only on Linux x64 with glibc';

test('no build for this runtime: one line says uWS is unavailable and why, the install succeeds', { skip }, (t) => {
  const r = project(t, '20.57.0', null, null);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 1, r.stdout);
  assert.equal(lines[0], `uws-compat: uWebSockets.js is unavailable here (uWebSockets.js 20.57.0 has no build for Node ${process.version} (ABI ${process.versions.modules}, linux-${process.arch})); the node engine will serve the data port`);
});

test('a build without a known checksum is not patched, and the install succeeds', { skip }, (t) => {
  const r = project(t, '99.0.0', Buffer.from('some future build'), null);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`unavailable here \\(no checksum for ${name} of uWebSockets.js 99.0.0`));
});

test('a known build whose bytes differ from its checksum fails the install loudly', { skip }, (t) => {
  const r = project(t, '20.57.0', Buffer.from('not the build'), 'a'.repeat(64));
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.stderr, new RegExp(`uws-compat: ${name}: sha256 [0-9a-f]{64}, expected a{64}: refusing to patch an unknown binary`));
});
