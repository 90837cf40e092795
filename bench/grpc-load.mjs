// The load of the gRPC targets, both reporting what the other load generators do
// ({ rps, p99Ms, requests, non2xx, errors }):
// - unary: h2load (h2-load.mjs) POSTing one framed Bench/Unary request with gRPC's two
//   request headers. h2load counts an HTTP 200 as a success, and a gRPC error is a 200 with
//   grpc-status in its trailers (or its head), which h2load never reads. So the upstream's
//   count of answered calls (Bench/Served) is read before and after: each 200 beyond it was
//   answered by something else than the upstream (a gateway's own gRPC error), and counts
//   as an error (`grpcNotServed`, a lower bound: a call the upstream answered whose answer was
//   then lost is not seen here).
// - stream: grpc-stream-load.mjs in its own process; "requests" are streamed messages.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childOutput } from './child-output.mjs';
import { GRPC_HEADERS, UNARY_REQUEST, grpcCall, requestBody } from './grpc-wire.mjs';

const STREAM_LOAD = join(dirname(fileURLToPath(import.meta.url)), 'grpc-stream-load.mjs');

/** How many Unary calls the upstream at `upstreamUrl` has answered so far. */
async function servedCalls(upstreamUrl) {
  const r = await grpcCall(upstreamUrl, 'Served', {});
  if (r.status !== 200 || r.grpcStatus !== 0) throw new Error(`grpc upstream: Served answered ${r.status}, grpc-status ${r.grpcStatus}`);
  return r.replies[0].unary;
}

/**
 * The `load(url, seconds)` of the unary targets (`url`: the method's http URL, h2c), driven by
 * `h2` (h2Load's function); the request body is written to a file in `tmpDir` once.
 */
export function grpcUnaryLoad({ h2, upstreamUrl, tmpDir }) {
  const dataFile = join(tmpDir, 'grpc-unary-request.bin');
  writeFileSync(dataFile, requestBody('Unary', UNARY_REQUEST));
  return async (url, seconds) => {
    const before = await servedCalls(upstreamUrl);
    const r = await h2(url, seconds, GRPC_HEADERS, { dataFile });
    const served = (await servedCalls(upstreamUrl)) - before;
    r.grpcNotServed = Math.max(0, r.answered2xx - served);
    r.errors += r.grpcNotServed;
    return r;
  };
}

/**
 * The `load(url, seconds)` of the streaming targets: grpc-stream-load.mjs keeping `calls`
 * calls of `messages` replies of `bytes` bytes in flight on one connection. `spawnNode(args)`
 * starts it (pinned to the load generator's CPU when pinning is on, stdin a pipe so that it
 * stops with run.mjs) and tracks it.
 */
export function grpcStreamLoad({ calls, messages, bytes, spawnNode }) {
  return async (url, seconds) => {
    const args = [STREAM_LOAD, new URL(url).origin, String(calls), String(seconds), String(messages), String(bytes)];
    const { code, signal, out, err } = await childOutput(spawnNode(args));
    if (code !== 0) throw new Error(`grpc-stream-load exited ${code ?? signal}:\n${err}`);
    let r;
    try {
      r = JSON.parse(out.trim().split('\n').at(-1));
    } catch {
      throw new Error(`cannot parse grpc-stream-load output:\n${out}${err}`);
    }
    return { rps: r.rps, p99Ms: r.p99Ms, requests: r.messages, non2xx: 0, errors: r.errors };
  };
}
