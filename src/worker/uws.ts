import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Uws from 'uWebSockets.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

/**
 * Loads the native uWebSockets.js build directly. The package would silently fall
 * back to a slow Node implementation when its binary does not fit this Node; a
 * gateway must fail loudly instead.
 */
function loadNative(): typeof Uws {
  const require = createRequire(import.meta.url);
  const pkgDir = dirname(require.resolve('uWebSockets.js/package.json'));
  const binary = join(pkgDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
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
