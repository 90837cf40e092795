// The upstream every proxy in the benchmark forwards to: node:http, keep-alive,
// a fixed small JSON body. Runs in its own process.
//
//   node bench/upstream.mjs [port]      (port 0 or absent: the kernel picks one)
//
// Prints one line `ready port=N` on stdout once it listens; exits when its stdin
// closes (the parent died) or on SIGTERM/SIGINT.
import { createServer } from 'node:http';
import { exitWithParent } from './lifecycle.mjs';
import { UPSTREAM_BODY } from './fixtures.mjs';

const HEADERS = { 'content-type': 'application/json', 'content-length': String(UPSTREAM_BODY.length) };

const server = createServer((req, res) => {
  // Drain any request body so the connection stays reusable.
  req.resume();
  res.writeHead(200, HEADERS);
  res.end(UPSTREAM_BODY);
});
// Keep-alive well past the benchmark's idle gaps between targets.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 125_000;
server.requestTimeout = 0;

server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`ready port=${server.address().port}\n`);
});
exitWithParent(() => server.close());
