// The limit for a directResponse route: a bare uWebSockets.js server answering a
// fixed "hello" on every path. Runs in its own process.
//
//   node bench/bare-uws.mjs [port]
//
// Loads the package's native binary directly, as the gateway does (uws-native.mjs).
//
// Prints one line `ready port=N` on stdout once it listens.
import { serveFixed } from './uws-native.mjs';

// Same shape as the gateway's directResponse: status line, one corked end.
serveFixed('bare-uws', Number(process.argv[2] ?? 0), {}, 'hello');
