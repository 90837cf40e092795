import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { currentRuntime, uwsSupport, type UwsRuntime } from '../../src/shared/uws-support.js';

const PKG = '/p/node_modules/uWebSockets.js';
const COMPAT = '/p/.uws-compat';

/** A runtime whose files are the set given. */
function runtime(fields: Partial<UwsRuntime>, files: string[]): UwsRuntime {
  return { platform: 'linux', arch: 'x64', abi: '137', nodeVersion: 'v24.1.0', glibc: '2.36', packageDir: PKG, compatDir: COMPAT, ...fields, exists: (p) => files.includes(p) };
}

test('linux x64: ok only when the package has the build and the patched copy exists', () => {
  const build = join(PKG, 'uws_linux_x64_137.node');
  const copy = join(COMPAT, 'uws_linux_x64_137.node');
  assert.deepEqual(uwsSupport(runtime({}, [build, copy])), { ok: true });
  const noCopy = uwsSupport(runtime({}, [build]));
  assert.equal(noCopy.ok, false);
  assert.match(!noCopy.ok ? noCopy.reason : '', /patched copy \.uws-compat\/uws_linux_x64_137\.node is missing/);
  // glibc 2.38 or later changes nothing on x64: the read-loop patch is always wanted.
  assert.equal(uwsSupport(runtime({ glibc: '2.40' }, [build])).ok, false);
});

test('a runtime without a build (Node 26, ABI 147) is refused with the version and ABI in the reason', () => {
  const r = uwsSupport(runtime({ abi: '147', nodeVersion: 'v26.0.0' }, [join(PKG, 'uws_linux_x64_137.node')]));
  assert.deepEqual(r, { ok: false, reason: 'uWebSockets.js has no build for Node v26.0.0 (ABI 147, linux-x64)' });
});

test('linux arm64 needs the patched copy below glibc 2.38 only', () => {
  const build = join(PKG, 'uws_linux_arm64_137.node');
  assert.deepEqual(uwsSupport(runtime({ arch: 'arm64', glibc: '2.39' }, [build])), { ok: true });
  assert.deepEqual(uwsSupport(runtime({ arch: 'arm64', glibc: '2.38' }, [build])), { ok: true });
  assert.equal(uwsSupport(runtime({ arch: 'arm64', glibc: '2.36' }, [build])).ok, false);
  assert.deepEqual(uwsSupport(runtime({ arch: 'arm64', glibc: '2.36' }, [build, join(COMPAT, 'uws_linux_arm64_137.node')])), { ok: true });
});

test('musl, a missing package, and other platforms', () => {
  const musl = uwsSupport(runtime({ glibc: undefined }, [join(PKG, 'uws_linux_x64_137.node')]));
  assert.match(!musl.ok ? musl.reason : '', /needs glibc/);
  assert.deepEqual(uwsSupport(runtime({ packageDir: null }, [])), { ok: false, reason: 'the uWebSockets.js package is not installed' });
  assert.deepEqual(uwsSupport(runtime({ platform: 'darwin', arch: 'arm64', glibc: undefined }, [join(PKG, 'uws_darwin_arm64_137.node')])), { ok: true });
  assert.equal(uwsSupport(runtime({ platform: 'freebsd', glibc: undefined }, [])).ok, false);
});

test('this runtime: the probe agrees with whether the worker can load uWS, and never loads it itself', () => {
  const rt = currentRuntime();
  assert.equal(rt.abi, process.versions.modules);
  const support = uwsSupport();
  // The worker's own loader (src/worker/engine/uws/uws.ts) in a child: it throws where uWS cannot run.
  const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', "await import('./src/worker/engine/uws/uws.ts')"], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(child.status === 0, support.ok, `probe ${JSON.stringify(support)}, worker loader exit ${child.status}: ${child.stderr}`);
  // The shared objects a process holds, after it asked: no uws_*.node among them.
  const asked = spawnSync(process.execPath, ['--import', 'tsx', '-e', "const m = await import('./src/shared/uws-support.ts'); m.uwsSupport(); console.log(JSON.stringify(process.report.getReport().sharedObjects))"], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(asked.status, 0, asked.stderr);
  const objects = JSON.parse(asked.stdout) as string[];
  assert.ok(objects.length > 0 && !objects.some((o) => o.includes('uws_')), asked.stdout);
});
