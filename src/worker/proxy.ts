import type { Dispatcher } from 'undici';
import type { Readable } from 'node:stream';
import type { ClusterPools } from './upstream-pools.js';
import { upstreamHeaders } from './upstream-request-headers.js';
import type { RequestOwner } from './request-owner.js';
import { Forwarding } from './forwarding.js';
import { HeadersDeadline, PRECISE_HEADERS_BELOW_MS } from './headers-deadline.js';
import { grpcWebRequestBody, grpcWebUpstreamHeaders } from './grpc/grpc-web-request.js';

/**
 * The proxy stage: always last, no settings. The upstream gets the normalised path (the
 * one the route matched, or path-rewrite's) and the query byte for byte; hop-by-hop
 * headers are dropped both ways; X-Forwarded-* are set; both bodies stream with
 * backpressure (client socket paused while the upstream is slow to take the body,
 * upstream paused while the client is slow to read the response).
 *
 * `body` is a Buffer when it was read whole first (request-buffer.ts), a stream
 * otherwise. The request's life ends through its handlers (relay-handler.ts).
 */
export function proxy(life: RequestOwner, pools: ClusterPools, body: Buffer | Readable | null): void {
  const { flow } = life;
  // The client left, or the call's deadline answered it while a step worked.
  if (!life.answerable) {
    if (body !== null && !Buffer.isBuffer(body)) body.destroy();
    return life.finish();
  }
  const replayable = body === null || Buffer.isBuffer(body); // a streamed body is read once
  // The retry step's policy wins over the cluster's for its route.
  const retry = replayable ? (flow?.retry ?? pools.retryPolicy) : null;
  // A gRPC route's call lives by its grpc-timeout (exchange-grpc.ts): the cluster's waits would
  // cut a long call or a quiet stream; a route's timeout step still bounds it. 0: no wait bound.
  const call = life.grpc;
  const grpc = call !== null && call.routed;
  let headers = upstreamHeaders(life, flow === null ? null : flow.editPlan(), life.trace);
  if (call !== null && call.translate) {
    // A browser's gRPC-Web call becomes a gRPC call upstream (grpc/grpc-web-request.ts).
    headers = grpcWebUpstreamHeaders(headers, call.web!);
    body = grpcWebRequestBody(body, call.web!);
  }
  const headersMs = Math.min(flow?.timeouts?.headersMs ?? (grpc ? 0 : pools.spec.headersMs), retry?.perTryMs ?? Infinity);
  const opts: Dispatcher.DispatchOptions = {
    path: flow === null ? target(life.path, life.query) : target(flow.path, flow.query),
    method: life.method as Dispatcher.HttpMethod,
    headers,
    body,
    headersTimeout: headersMs,
    bodyTimeout: flow?.timeouts?.bodyMs ?? (grpc ? 0 : pools.spec.bodyMs),
    // undici's pipelining guard: a request with a streamed body is not safe to replay on another connection.
    idempotent: replayable && (life.method === 'GET' || life.method === 'HEAD'),
  };
  // gRPC over HTTP/2 needs `te: trailers` upstream (the only te h2 allows); the client's, hop-by-hop, was dropped. First: the traceparent stays last (forwarding.ts).
  if (grpc && pools.spec.protocol !== undefined) headers.unshift('te', 'trailers');
  pools.retryPolicy?.budget?.request();
  const forwarding = new Forwarding(life, pools, opts, replayable, retry);
  life.onAbort(() => forwarding.clientAborted());
  forwarding.start(pools.pick(life), headersMs > 0 && headersMs < PRECISE_HEADERS_BELOW_MS ? new HeadersDeadline(forwarding, headersMs, life) : forwarding);
}

function target(path: string, query: string | null): string {
  return query === null ? path : `${path}?${query}`;
}
