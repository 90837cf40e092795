import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Uws from 'uWebSockets.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, us_socket_context_t, WebSocket } from 'uWebSockets.js';

const GLIBC_LINKED = [2, 38];

/**
 * Linux x64 always loads the patched copy (its read loop respects pause(), its res.upgrade
 * does not warn outside cork; see scripts/uws-compat/); elsewhere on Linux only below glibc 2.38, the version
 * the registry build was linked against.
 */
function needsCompatCopy(): boolean {
  if (process.platform !== 'linux') return false;
  const { header } = process.report.getReport() as { header: { glibcVersionRuntime?: string } };
  const version = header.glibcVersionRuntime;
  if (!version) return false; // musl: the registry build does not run there at all, and says so
  if (process.arch === 'x64') return true;
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major < GLIBC_LINKED[0]! || (major === GLIBC_LINKED[0] && minor < GLIBC_LINKED[1]!);
}

/**
 * Loads the native uWebSockets.js build directly. The package would silently fall back to
 * a slow Node implementation when its binary does not fit this Node; a gateway must fail
 * loudly instead. Where needsCompatCopy() says so, the copy that `npm install` patched
 * (scripts/uws-compat/install.mjs) is loaded from the project's own .uws-compat/ folder.
 */
function loadNative(): typeof Uws {
  const require = createRequire(import.meta.url);
  const name = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  let binary = join(dirname(require.resolve('uWebSockets.js')), name);
  if (needsCompatCopy()) {
    binary = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', '.uws-compat', name);
    if (!existsSync(binary)) {
      throw new Error(
        `uWebSockets.js runs here from the copy npm install patches, and ${binary} is missing. ` +
          'Run `npm install` (or `node scripts/uws-compat/install.mjs`) in the project folder to make it.',
      );
    }
  }
  try {
    return require(binary) as typeof Uws;
  } catch (err) {
    throw new Error(
      `uWebSockets.js has no native build for ${process.platform}-${process.arch} ABI ${process.versions.modules} ` +
        `(Node ${process.version}); refusing the slow fallback. ${(err as Error).message}`,
    );
  }
}

export const uws = loadNative();

/**
 * uWS's idle timers (this build's App.setIdleTimeout and setResponseTimeout, not in its type
 * declarations): a connection waiting on its client this many seconds is closed. The first
 * covers a new connection and a request body; the second the wait after each answer (the next
 * request on a keep-alive connection). uWS checks timers every 4 s.
 */
export function setIdleTimeout(app: Uws.TemplatedApp, seconds: number): void {
  const timers = app as Uws.TemplatedApp & { setIdleTimeout(seconds: number): void; setResponseTimeout(seconds: number): void };
  timers.setIdleTimeout(seconds);
  timers.setResponseTimeout(seconds);
}

/**
 * Completes a WebSocket handshake after the request callback returned (the upstream's answer
 * came). Never inside res.cork(): there uWS 20.57's cork epilogue reads the HTTP state of a
 * socket the upgrade just shrank and, when freed memory says "close", shuts the new WebSocket
 * (scripts/uws-compat/upgrade-warning.mjs). Only a status line carrying extra headers
 * (`statusLine`, e.g. the request id) is corked, and sent first; uWS writes the rest.
 */
export function upgradeLater<T>(res: Uws.HttpResponse, userData: T, key: string, protocol: string, context: Uws.us_socket_context_t, statusLine: string | null): void {
  if (statusLine !== null) res.cork(() => res.writeStatus(statusLine));
  res.upgrade(userData, key, protocol, '', context);
}
