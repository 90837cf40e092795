// The bench's own uWS servers (bare-uws.mjs, floor-proxy.mjs, upstream.mjs): load the native
// binary through the gateway's loader (never the package's slow JS fallback, which would make
// these limits meaningless), listen on 127.0.0.1, print `ready port=N`, and stop with the parent.
import { exitWithParent } from './lifecycle.mjs';

// The gateway's own loader (the built dist/): the bench servers run the same uWS build as
// the gateway, patched copy included where glibc is older than the build needs.
let loaded;
let loadError;
try {
  loaded = (await import('../dist/worker/engine/uws/uws.js')).uws;
} catch (err) {
  loadError = err;
}

export function loadUws(name) {
  if (!loaded) {
    process.stderr.write(`${name}: no native uWebSockets.js build for this Node: ${loadError?.message}\n`);
    process.exit(1);
  }
  return loaded;
}

/** Listens on `port` (0: the kernel picks), reports it, and closes on the parent's exit (then `onClose`). */
export function listenUntilParentExits(uws, app, name, port, onClose) {
  let listenSocket = null;
  app.listen('127.0.0.1', port, (socket) => {
    if (!socket) {
      process.stderr.write(`${name}: cannot listen\n`);
      process.exit(1);
    }
    listenSocket = socket;
    process.stdout.write(`ready port=${uws.us_socket_local_port(socket)}\n`);
  });
  exitWithParent(() => {
    if (listenSocket) uws.us_listen_socket_close(listenSocket);
    onClose?.();
  });
}

/** A server answering every request with 200, `headers` and `body` in one corked write. */
export function serveFixed(name, port, headers, body) {
  const uws = loadUws(name);
  const app = uws.App();
  const pairs = Object.entries(headers);
  app.any('/*', (res) => {
    // Any request body is left unread: uWS discards it and keeps the connection.
    res.cork(() => {
      res.writeStatus('200 OK');
      for (const [k, v] of pairs) res.writeHeader(k, v);
      res.end(body);
    });
  });
  listenUntilParentExits(uws, app, name, port);
}
