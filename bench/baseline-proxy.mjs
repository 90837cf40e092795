// The plain Node proxy baseline: fastify 5 + @fastify/http-proxy (undici under the
// hood via @fastify/reply-from), logger off, forwarding every path to the upstream.
// Runs in its own process.
//
//   node bench/baseline-proxy.mjs <upstream-url> [port]
//
// Prints one line `ready port=N` on stdout once it listens.
import Fastify from 'fastify';
import proxy from '@fastify/http-proxy';
import { exitWithParent } from './lifecycle.mjs';

const upstream = process.argv[2];
if (!upstream) {
  process.stderr.write('usage: node bench/baseline-proxy.mjs <upstream-url> [port]\n');
  process.exit(2);
}

const app = Fastify({ logger: false, keepAliveTimeout: 120_000 });
await app.register(proxy, { upstream, prefix: '/', http2: false });
await app.listen({ host: '127.0.0.1', port: Number(process.argv[3] ?? 0) });
process.stdout.write(`ready port=${app.server.address().port}\n`);
exitWithParent(() => app.server.close());
