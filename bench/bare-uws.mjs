// The limit for a directResponse route: a bare uWebSockets.js server answering a
// fixed "hello" on every path. Runs in its own process.
//
//   node bench/bare-uws.mjs [port]
//
// Loads the package's native binary directly, as the gateway does (uws-native.mjs).
//
// Prints one line `ready port=N` on stdout once it listens.
import { listenUntilParentExits, loadUws } from './uws-native.mjs';

const uws = loadUws('bare-uws');
const app = uws.App();
app.any('/*', (res) => {
  // Same shape as the gateway's directResponse: status line, one corked end.
  res.cork(() => res.writeStatus('200 OK').end('hello'));
});

listenUntilParentExits(uws, app, 'bare-uws', Number(process.argv[2] ?? 0));
