import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
// @ts-expect-error -- a plain .mjs script of the install step, without type declarations
import { compareGlibc, readGlibcNeeds } from '../../scripts/uws-compat/elf-glibc.mjs';
// @ts-expect-error -- a plain .mjs script of the install step, without type declarations
import { patchVerified } from '../../scripts/uws-compat/install.mjs';
// @ts-expect-error -- a plain .mjs script of the install step, without type declarations
import { patchRecvLoop } from '../../scripts/uws-compat/recv-loop.mjs';
// @ts-expect-error -- a plain .mjs script of the install step, without type declarations
import { patchUpgradeWarning } from '../../scripts/uws-compat/upgrade-warning.mjs';

interface Need { file: string; name: string; index: number; flags: number }
interface Sym { name: string; index: number }
const needsOf = readGlibcNeeds as (buf: Buffer) => { needs: Need[]; symbols: Sym[] };
const patch = patchVerified as (buf: Buffer, expected: string, runtime: string, arch: string) => { renamed: string[] };
const cmp = compareGlibc as (a: string, b: string) => number;
const recvLoop = patchRecvLoop as (buf: Buffer, arch: string) => string | null;
const upgradeWarning = patchUpgradeWarning as (buf: Buffer, arch: string) => string | null;

const pkgDir = dirname(createRequire(import.meta.url).resolve('uWebSockets.js'));
const version = (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
const checksums = JSON.parse(readFileSync(new URL('../../scripts/uws-compat/checksums.json', import.meta.url), 'utf8')) as Record<string, Record<string, string>>;
const name = 'uws_linux_x64_115.node';
const original = readFileSync(join(pkgDir, name));
const expected = checksums[version]![name]!;
const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
const oldGlibc = process.platform === 'linux' && process.arch === 'x64' && process.versions.modules === '115' && glibc !== undefined && cmp(glibc, '2.38') < 0;

function loadsInChild(buf: Buffer): { ok: boolean; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'uws-compat-'));
  try {
    const file = join(dir, name);
    writeFileSync(file, buf);
    const r = spawnSync(process.execPath, ['-e', `if (typeof require(${JSON.stringify(file)}).App !== 'function') process.exit(3)`], { encoding: 'utf8' });
    return { ok: r.status === 0, stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('glibc versions compare by number, not as text', () => {
  assert.ok(cmp('GLIBC_2.2.5', 'GLIBC_2.17') < 0);
  assert.ok(cmp('2.36', '2.38') < 0);
  assert.equal(cmp('GLIBC_2.38', '2.38'), 0);
  assert.ok(cmp('2.40', '2.38') > 0);
});

test('the registry build asks glibc 2.38 for the three C23 functions only; the patched copy asks for the classic ones, and 2.38 only weakly', () => {
  const before = needsOf(original);
  const need238 = before.needs.find((v) => v.file === 'libc.so.6' && v.name === 'GLIBC_2.38')!;
  assert.ok(need238, 'the build links against GLIBC_2.38');
  assert.deepEqual(before.symbols.filter((s) => s.index === need238.index).map((s) => s.name).sort(), ['__isoc23_sscanf', '__isoc23_strtol', '__isoc23_strtoul']);

  const copy = Buffer.from(original);
  const result = patch(copy, expected, '2.36', 'x64');
  assert.equal(result.renamed.length, 3);
  const after = needsOf(copy);
  const base = after.needs.find((v) => v.file === 'libc.so.6' && v.name === 'GLIBC_2.2.5')!;
  assert.deepEqual(after.symbols.filter((s) => s.index === need238.index), [], 'no symbol still asks for 2.38');
  assert.equal(after.needs.find((v) => v.name === 'GLIBC_2.38')!.flags & 2, 2, 'the 2.38 need is weak');
  for (const classic of ['sscanf', 'strtol', 'strtoul']) {
    assert.ok(after.symbols.some((s) => s.name === classic && s.index === base.index), `${classic}@GLIBC_2.2.5`);
  }
  assert.ok(!after.symbols.some((s) => s.name.startsWith('__isoc23_')));
});

test('an unknown binary is refused, and one needing a newer glibc for another reason is refused by name', () => {
  const tampered = Buffer.from(original);
  tampered[tampered.length - 1] ^= 1;
  assert.throws(() => patch(tampered, expected, '2.36', 'x64'), /refusing to patch an unknown binary/);
  // glibc 2.35 (Ubuntu 22.04) lacks arc4random, which the build needs from 2.36: no patch helps.
  assert.throws(() => patch(Buffer.from(original), expected, '2.35', 'x64'), /arc4random@GLIBC_2\.36/);
});

test('on this glibc the registry build does not load and the patched copy does', { skip: !oldGlibc && 'needs Linux x64, Node 20 and glibc below 2.38' }, () => {
  const plain = loadsInChild(original);
  assert.equal(plain.ok, false);
  assert.match(plain.stderr, /GLIBC_2\.38/);
  const copy = Buffer.from(original);
  patch(copy, expected, glibc!, 'x64');
  const patched = loadsInChild(copy);
  assert.equal(patched.ok, true, patched.stderr);
});

test('the recv-loop patch changes one byte, at the one site of its exact bytes, in every x64 binary of the package; arm64 is left as built', () => {
  for (const abi of ['115', '127', '137', '141']) {
    const file = readFileSync(join(pkgDir, `uws_linux_x64_${abi}.node`));
    const copy = Buffer.from(file);
    assert.match(recvLoop(copy, 'x64')!, /^recv loop at 0x[0-9a-f]+$/, abi);
    const changed = [...copy.keys()].filter((i) => copy[i] !== file[i]);
    assert.equal(changed.length, 1, `ABI ${abi}: ${changed.length} bytes changed`);
    assert.deepEqual([file[changed[0]!], copy[changed[0]!]], [0x00, 0x01]);
    assert.throws(() => recvLoop(copy, 'x64'), /not found exactly once \(absent\)/, 'a patched binary is not patched twice');
  }
  const arm = readFileSync(join(pkgDir, 'uws_linux_arm64_115.node'));
  assert.equal(recvLoop(Buffer.from(arm), 'arm64'), null);
  const site = Buffer.from('ff50484181fe000008000f85', 'hex');
  assert.throws(() => recvLoop(Buffer.concat([site, site]), 'x64'), /\(several\)/);
});

test('the upgrade-warning patch turns two jumps in each res.upgrade (plain and TLS) of every x64 binary and nothing else; arm64 is left as built', () => {
  for (const abi of ['115', '127', '137', '141']) {
    const file = readFileSync(join(pkgDir, `uws_linux_x64_${abi}.node`));
    const copy = Buffer.from(file);
    const where = upgradeWarning(copy, 'x64')!;
    assert.match(where, /^upgrade warning at( 0x[0-9a-f]+){4}$/, abi);
    const sites = where.split(' ').slice(3).map((h) => parseInt(h, 16));
    // The je to the warning becomes a two-byte nop, the jne past it a jmp past it.
    const turned = sites.map((at) => `${file.subarray(at, at + 2).toString('hex')}>${copy.subarray(at, at + 2).toString('hex')}`);
    assert.deepEqual(turned, ['743c>6690', '75c4>ebc4', '743c>6690', '75c4>ebc4'], `ABI ${abi}`);
    const changed = [...copy.keys()].filter((i) => copy[i] !== file[i]);
    assert.ok(changed.every((i) => sites.some((at) => i === at || i === at + 1)), `ABI ${abi}: a byte outside the four sites changed`);
    assert.throws(() => upgradeWarning(copy, 'x64'), /not found exactly once in res\.upgrade \(absent\)/, 'a patched binary is not patched twice');
  }
  assert.equal(upgradeWarning(Buffer.from(readFileSync(join(pkgDir, 'uws_linux_arm64_115.node'))), 'arm64'), null);
});
