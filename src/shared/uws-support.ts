import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type UwsSupport = { ok: true } | { ok: false; reason: string };

/** What decides whether uWS loads here; a test passes its own. */
export interface UwsRuntime {
  platform: string;
  arch: string;
  /** process.versions.modules: the ABI a native addon is built for. */
  abi: string;
  nodeVersion: string;
  /** Linux only: the C library's glibc version, undefined on musl. */
  glibc: string | undefined;
  /** The uWebSockets.js package's folder, null when it is not installed. */
  packageDir: string | null;
  /** The project's .uws-compat/ (the copies `npm install` patched). */
  compatDir: string;
  exists(path: string): boolean;
}

const GLIBC_LINKED = [2, 38] as const;

/** This process's runtime. The package is resolved, never loaded. */
export function currentRuntime(): UwsRuntime {
  const header = process.platform === 'linux' ? (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header : {};
  let packageDir: string | null;
  try {
    packageDir = dirname(createRequire(import.meta.url).resolve('uWebSockets.js'));
  } catch {
    packageDir = null;
  }
  return {
    platform: process.platform,
    arch: process.arch,
    abi: process.versions.modules,
    nodeVersion: process.version,
    glibc: header.glibcVersionRuntime,
    packageDir,
    compatDir: join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.uws-compat'),
    exists: existsSync,
  };
}

/**
 * Whether uWebSockets.js can load its native build here, decided without loading it (the
 * CLI and the supervisor ask, and a build for another ABI could crash the asking process).
 * The rules are those of worker/uws.ts: linux x64, and other Linux below glibc 2.38, load
 * the copy the postinstall patched into .uws-compat/.
 */
export function uwsSupport(rt: UwsRuntime = currentRuntime()): UwsSupport {
  if (rt.packageDir === null) return { ok: false, reason: 'the uWebSockets.js package is not installed' };
  if (rt.platform === 'linux' && rt.glibc === undefined) return { ok: false, reason: 'uWebSockets.js needs glibc and this Linux has none (musl?)' };
  const name = `uws_${rt.platform}_${rt.arch}_${rt.abi}.node`;
  if (!rt.exists(join(rt.packageDir, name))) return { ok: false, reason: `uWebSockets.js has no build for Node ${rt.nodeVersion} (ABI ${rt.abi}, ${rt.platform}-${rt.arch})` };
  if (rt.platform === 'linux' && needsCompatCopy(rt.glibc!, rt.arch) && !rt.exists(join(rt.compatDir, name))) {
    return { ok: false, reason: `the patched copy .uws-compat/${name} is missing (npm install makes it; its output says why it did not)` };
  }
  return { ok: true };
}

function needsCompatCopy(glibc: string, arch: string): boolean {
  if (arch === 'x64') return true;
  const [major = 0, minor = 0] = glibc.split('.').map(Number);
  return major < GLIBC_LINKED[0] || (major === GLIBC_LINKED[0] && minor < GLIBC_LINKED[1]);
}
