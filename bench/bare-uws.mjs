// The limit for a directResponse route: a bare uWebSockets.js server answering a
// fixed "hello" on every path. Runs in its own process.
//
//   node bench/bare-uws.mjs [port]
//
// Loads the package's native binary directly (as the gateway does): the package's
// entry point would silently fall back to a slow pure-JS implementation when the
// binary does not fit this Node, which would make this "limit" meaningless.
//
// Prints one line `ready port=N` on stdout once it listens.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { exitWithParent } from './lifecycle.mjs';

const require = createRequire(import.meta.url);
const pkgDir = dirname(require.resolve('uWebSockets.js/package.json'));
const binary = join(pkgDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
let uws;
try {
  uws = require(binary);
} catch (err) {
  process.stderr.write(`bare-uws: no native uWebSockets.js build for this Node (${binary}): ${err.message}\n`);
  process.exit(1);
}

const app = uws.App();
app.any('/*', (res) => {
  // Same shape as the gateway's directResponse: status line, one corked end.
  res.cork(() => res.writeStatus('200 OK').end('hello'));
});

let listenSocket = null;
app.listen('127.0.0.1', Number(process.argv[2] ?? 0), (socket) => {
  if (!socket) {
    process.stderr.write('bare-uws: cannot listen\n');
    process.exit(1);
  }
  listenSocket = socket;
  process.stdout.write(`ready port=${uws.us_socket_local_port(socket)}\n`);
});
exitWithParent(() => {
  if (listenSocket) uws.us_listen_socket_close(listenSocket);
});
