// The upstream every proxy in the benchmark forwards to: keep-alive, a fixed small JSON
// body, on every path. Runs in its own process.
//
//   node bench/upstream.mjs [port] [uws|node]
//
// `uws` (the default) answers with a bare uWebSockets.js server: about a third of
// node:http's CPU per request. On a 2-CPU machine the upstream shares CPU 1 with the
// load generator, and a node:http upstream left that CPU nearly saturated whenever a
// proxy passed ~20,000 req/s: the fast proxies then waited on the upstream (their CPU
// per request rose by 15-20 % with idle wake-ups) while fastify, bound by its own CPU,
// was not held back at all. `node` keeps the node:http upstream for comparison with
// runs before 2026-11-26 08:30 UTC (BENCH_UPSTREAM=node npm run bench).
//
// Prints one line `ready port=N` on stdout once it listens; exits when its stdin
// closes (the parent died) or on SIGTERM/SIGINT.
import { createServer } from 'node:http';
import { exitWithParent } from './lifecycle.mjs';
import { UPSTREAM_BODY, UPSTREAM_KINDS } from './fixtures.mjs';
import { serveFixed } from './uws-native.mjs';

const port = Number(process.argv[2] ?? 0);
const kind = process.argv[3] ?? UPSTREAM_KINDS[0];

if (kind === 'uws') {
  serveFixed('upstream', port, { 'content-type': 'application/json' }, UPSTREAM_BODY);
} else if (kind === 'node') {
  const headers = { 'content-type': 'application/json', 'content-length': String(UPSTREAM_BODY.length) };
  const server = createServer((req, res) => {
    // Drain any request body so the connection stays reusable.
    req.resume();
    res.writeHead(200, headers);
    res.end(UPSTREAM_BODY);
  });
  // Keep-alive well past the benchmark's idle gaps between targets.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
  server.requestTimeout = 0;
  server.listen(port, '127.0.0.1', () => {
    process.stdout.write(`ready port=${server.address().port}\n`);
  });
  exitWithParent(() => server.close());
} else {
  process.stderr.write(`upstream: unknown kind ${JSON.stringify(kind)} (one of ${UPSTREAM_KINDS.join(', ')})\n`);
  process.exit(2);
}
