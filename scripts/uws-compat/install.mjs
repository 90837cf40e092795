// npm postinstall: a patched copy of the registry build of uWebSockets.js for Linux. On x64
// its socket read loop is made to respect pause() (recv-loop.mjs) and res.upgrade is made
// quiet outside cork (upgrade-warning.mjs); below glibc 2.38 (the version it was linked
// against) it is made loadable (elf-glibc.mjs). The package in node_modules is never touched:
// a checksummed copy of this Node's binary is patched into .uws-compat/ and proven to load in
// a child process. Nothing to do off Linux, or on arm64 with glibc >= 2.38. Where uWS has no
// build for this runtime, the install still succeeds: the `node` engine serves the data port.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareGlibc, patchForGlibc } from './elf-glibc.mjs';
import { patchRecvLoop } from './recv-loop.mjs';
import { patchUpgradeWarning } from './upgrade-warning.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fail = (message) => {
  console.error(`uws-compat: ${message}`);
  process.exit(1);
};
// Only a binary that is not the one its checksum names fails the install; a runtime uWS does not fit is no error.
const unavailable = (why) => {
  console.log(`uws-compat: uWebSockets.js is unavailable here (${why}); the node engine will serve the data port`);
  process.exit(0);
};

export function compatTarget(projectRoot, arch = process.arch, abi = process.versions.modules) {
  return join(projectRoot, '.uws-compat', `uws_linux_${arch}_${abi}.node`);
}

/** Whether this machine needs a patched copy: the recv loop fix (x64) or the glibc fix (below 2.38). */
export function needsCopy(glibc, arch = process.arch) {
  return glibc !== undefined && (arch === 'x64' || compareGlibc(glibc, '2.38') < 0);
}

/** The glibc patch cannot make the binary loadable on this glibc: uWS is unavailable, nothing is wrong. */
export class GlibcTooOld extends Error {}

/**
 * Patches `binary` in place after checking it is the build `expected` names: the recv loop
 * on x64, and the glibc symbols when `runtime` is below 2.38.
 */
export function patchVerified(binary, expected, runtime, arch) {
  const actual = createHash('sha256').update(binary).digest('hex');
  if (actual !== expected) throw new Error(`sha256 ${actual}, expected ${expected}: refusing to patch an unknown binary`);
  const recvLoop = patchRecvLoop(binary, arch);
  const upgrade = patchUpgradeWarning(binary, arch);
  if (compareGlibc(runtime, '2.38') >= 0) return { recvLoop, upgrade, renamed: [], weakened: [] };
  try {
    return { recvLoop, upgrade, ...patchForGlibc(binary, runtime, arch) };
  } catch (err) {
    throw new GlibcTooOld(`cannot run on glibc ${runtime}: ${err.message}`);
  }
}

function main() {
  const glibc = process.platform === 'linux' ? process.report.getReport().header.glibcVersionRuntime : undefined;
  if (process.platform === 'linux' && glibc === undefined) unavailable('no glibc (musl?): the registry builds need glibc');
  if (process.platform !== 'linux' || !needsCopy(glibc)) return;

  const name = `uws_linux_${process.arch}_${process.versions.modules}.node`;
  const runtime = `Node ${process.version} (ABI ${process.versions.modules}, linux-${process.arch})`;
  let pkgDir;
  try {
    pkgDir = dirname(createRequire(join(root, 'package.json')).resolve('uWebSockets.js'));
  } catch {
    unavailable('the uWebSockets.js package is not installed');
  }
  const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const checksums = JSON.parse(readFileSync(join(root, 'scripts', 'uws-compat', 'checksums.json'), 'utf8'));
  const expected = checksums[version]?.[name];
  if (!existsSync(join(pkgDir, name))) unavailable(`uWebSockets.js ${version} has no build for ${runtime}`);
  if (!expected) unavailable(`no checksum for ${name} of uWebSockets.js ${version} in scripts/uws-compat/checksums.json, so it is not patched`);

  const binary = readFileSync(join(pkgDir, name));
  let result;
  try {
    result = patchVerified(binary, expected, glibc, process.arch);
  } catch (err) {
    if (err instanceof GlibcTooOld) unavailable(`${name}: ${err.message}`);
    fail(`${name}: ${err.message}`);
  }

  const target = compatTarget(root);
  mkdirSync(dirname(target), { recursive: true });
  const temporary = target.replace(/\.node$/, `.${process.pid}.tmp.node`);
  writeFileSync(temporary, binary);
  const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(temporary)}).App()`], { encoding: 'utf8' });
  if (probe.status !== 0) {
    rmSync(temporary, { force: true });
    unavailable(`the patched ${name} does not load on glibc ${glibc}: ${probe.stderr.trim().split('\n')[0]}`);
  }
  renameSync(temporary, target);
  const done = [result.recvLoop, result.upgrade, ...result.renamed, ...result.weakened.map((v) => `weak: ${v}`)].filter(Boolean);
  console.log(`uws-compat: glibc ${glibc}: wrote ${target} (${done.join(', ')})`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
