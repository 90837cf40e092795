// The gRPC targets: calls of grpc-bench.proto's Bench service to grpc-upstream.mjs (on the
// load CPU), directly and through a gateway of their own on the server's CPU (node engine,
// listen.h2c, 1 worker; a route `grpc: true` to a cluster `protocol: "h2c"` of that
// upstream). Unary calls/s are driven by h2load, so those two targets need it; streamed
// messages/s by grpc-stream-load.mjs. Both sides of each ratio get the same load.
import { join } from 'node:path';
import { startGateway } from './gateway.mjs';
import { grpcUnaryLoad } from './grpc-load.mjs';
import { SERVICE_NAME, methodPath } from './grpc-wire.mjs';
import { expectGrpc } from './sanity-checks.mjs';

export const GRPC_UNARY_KEYS = ['grpcUnaryDirect', 'grpcUnaryGateway'];
export const GRPC_STREAM_KEYS = ['grpcStreamDirect', 'grpcStreamGateway'];
export const GRPC_KEYS = [...GRPC_UNARY_KEYS, ...GRPC_STREAM_KEYS];

/** The sanity check's stream: this many replies of the load's size. */
const CHECK_STREAM_COUNT = 100;

/** The gateway's cluster and route to the gRPC upstream at `address` (host:port). */
const grpcConfig = (address) => ({
  clusters: [['bench-grpc', { targets: [address], protocol: 'h2c' }]],
  routes: [['bench-grpc', { cluster: 'bench-grpc', pathPrefix: `/${SERVICE_NAME}/`, order: 10, grpc: true }]],
});

/**
 * The targets `wanted(key)` asks for, as run.mjs targets ({ key, label, url, pid, drive, check }):
 * the unary ones only with `h2` (h2-load.mjs's load function), the streaming ones driven by
 * `streamLoad` (grpc-load.mjs's grpcStreamLoad) with replies of `streamBytes`. Starts the
 * upstream, and the gateway when one of its targets is wanted.
 */
export async function grpcTargets(procs, { root, benchDir, host, upstreamPort, cpu, loadCpu, freePort, wanted, h2, streamLoad, streamBytes }) {
  const keys = GRPC_KEYS.filter((k) => wanted(k) && (h2 || !GRPC_UNARY_KEYS.includes(k)));
  if (!keys.length) return [];
  const upstream = await procs.startNode('grpc-upstream', [join(benchDir, 'grpc-upstream.mjs'), String(await freePort())], { cpu: loadCpu });
  const address = `${host}:${upstream.match[1]}`;
  const direct = `http://${address}`;
  const gateway = keys.some((k) => k.endsWith('Gateway'))
    ? await startGateway(procs, { root, benchDir, host, upstreamPort, cpu, freePort, engine: 'node', h2c: true, ...grpcConfig(address) })
    : null;
  const unaryLoad = h2 ? grpcUnaryLoad({ h2, upstreamUrl: direct, tmpDir: procs.tmp('switchyard-bench-grpc-') }) : null;
  const unary = (base) => ({ url: `${base}${methodPath('Unary')}`, drive: unaryLoad, check: (t) => expectGrpc(t.label, t.url, 'Unary') });
  const stream = (base) => ({
    url: `${base}${methodPath('Stream')}`,
    drive: streamLoad,
    check: (t) => expectGrpc(t.label, t.url, 'Stream', { count: CHECK_STREAM_COUNT, size: streamBytes }),
  });
  const all = {
    grpcUnaryDirect: { label: 'gRPC unary direct (calls/s)', pid: upstream.child.pid, ...unary(direct) },
    grpcUnaryGateway: gateway && { label: 'gRPC unary through the gateway (calls/s)', pid: gateway.pid, ...unary(gateway.data) },
    grpcStreamDirect: { label: 'gRPC server stream direct (messages/s)', pid: upstream.child.pid, ...stream(direct) },
    grpcStreamGateway: gateway && { label: 'gRPC server stream through the gateway (messages/s)', pid: gateway.pid, ...stream(gateway.data) },
  };
  return keys.map((key) => ({ key, ...all[key] }));
}
