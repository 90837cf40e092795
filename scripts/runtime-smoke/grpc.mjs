// The smoke's gRPC step: an h2c gRPC upstream of its own, a cluster `protocol: "h2c"` and a
// route for /smoke.Echo/ published, then four calls: a unary echo (the upstream's trailers
// relayed), an unrouted method (the gateway's own refusal, grpc-status 12), a call the client
// cancels (the cancel must reach the upstream's stream) and one past its grpc-timeout
// (grpc-status 4). On the node engine over the TLS listener's h2; on uws, which has no
// HTTP/2, the same calls as gRPC-Web over HTTP/1.1 on the plain port.
import { h2Call, h2Session, webCall } from './grpc-calls.mjs';
import { SLOW, frame, startGrpcUpstream } from './grpc-upstream.mjs';

const MESSAGE = frame(Buffer.from('hello over gRPC'));

export async function grpc(ctx, host) {
  const web = ctx.engineName === 'uws';
  const upstream = (ctx.grpcUpstream = await startGrpcUpstream());
  await ctx.set('cluster', 'rpc', { targets: [upstream.address], protocol: 'h2c' });
  await ctx.set('route', 'rpc', { pathPrefix: '/smoke.Echo/', cluster: 'rpc', grpc: web ? { web: true } : true });
  await ctx.publishGo();
  let call;
  if (web) {
    call = (path, opts) => webCall(`http://127.0.0.1:${ctx.dataPort}`, path, opts);
  } else {
    const session = (ctx.grpcSession = await h2Session(ctx.tlsPort, host));
    call = (path, opts) => h2Call(session, host, path, opts);
  }
  // HTTP/2 carries every status as trailers; gRPC-Web over HTTP/1.1 puts a refusal's in the head.
  const refusal = (r) => (web ? r.headStatus : r.trailerStatus);
  const held = [];

  const one = await call('/smoke.Echo/Say', { body: MESSAGE });
  if (one.status !== 200 || !one.data.equals(MESSAGE) || one.trailerStatus !== '0') throw new Error(`unary: ${describe(one)}`);
  held.push(`echo + grpc-status 0 in ${web ? 'the trailer frame' : 'trailers'}`);

  const none = await call('/smoke.None/X', { body: MESSAGE });
  if (none.status !== 200 || refusal(none) !== '12') throw new Error(`unrouted /smoke.None/X: ${describe(none)}`);
  held.push('unrouted → 12');

  const before = upstream.slow.closed.length;
  const cancelled = await call(SLOW, { body: MESSAGE, cancelAfterMs: 300 });
  if (cancelled.cancelledAt === undefined) throw new Error(`Slow answered before the cancel: ${describe(cancelled)}`);
  const closed = await upstream.slowClosed(before, 2_000);
  held.push(`cancel reached the upstream in ${closed.at - cancelled.cancelledAt} ms (RST ${closed.rstCode})`);

  const late = await call(SLOW, { headers: { 'grpc-timeout': '200m' }, body: MESSAGE });
  const status = web ? (late.headStatus ?? late.trailerStatus) : late.trailerStatus;
  if (late.status !== 200 || status !== '4' || late.ms > 1_500) throw new Error(`grpc-timeout 200m: ${describe(late)}`);
  held.push(`grpc-timeout 200m → 4 in ${late.ms} ms`);
  ctx.grpcSession?.close();
  return `${web ? 'engine uws: gRPC-Web over HTTP/1.1 (gRPC needs HTTP/2)' : 'ALPN h2'}; ${held.join(', ')}`;
}

function describe(r) {
  return `HTTP ${r.status}, ${r.data?.length ?? 0} body bytes, grpc-status head ${r.headStatus} trailers ${r.trailerStatus}, ${r.ms} ms`;
}

/** What the step started, whether or not it passed. */
export function grpcCleanUp(ctx) {
  ctx.grpcSession?.destroy();
  ctx.grpcUpstream?.close();
}
