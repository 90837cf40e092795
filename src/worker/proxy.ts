import type { Dispatcher } from 'undici';
import type { Readable } from 'node:stream';
import type { Exchange } from './exchange.js';
import type { ClusterPools } from './upstream-pools.js';
import { upstreamHeaders } from './upstream-request-headers.js';
import type { RequestFlow } from './flow.js';
import { PRECISE_HEADERS_BELOW_MS, ProxyHandler, type ProxyEnv } from './proxy-handler.js';

/**
 * The proxy stage: always last, no settings. Path and query reach the upstream byte
 * for byte; hop-by-hop headers are dropped both ways; X-Forwarded-* are set; both
 * bodies stream with backpressure (client socket paused while the upstream is slow to
 * take the body, upstream paused while the client is slow to read the response).
 */
/**
 * `flow` is null on routes without steps: the request goes out exactly as it came.
 * `body` is a Buffer when it was read whole first (request-buffer.ts), a stream otherwise.
 * `done` runs once when the exchange ends (after the flow's done hooks).
 */
export function proxy(ex: Exchange, pools: ClusterPools, body: Buffer | Readable | null, flow: RequestFlow | null, env: ProxyEnv, done: () => void): void {
  if (ex.aborted) {
    if (body !== null && !Buffer.isBuffer(body)) body.destroy();
    flow?.finish(true);
    return done();
  }
  const spec = pools.spec;
  const retry = body === null ? (flow?.retry ?? null) : null; // a streamed body cannot be replayed
  let current: ProxyHandler | null = null;
  ex.onAbort(() => current?.clientAborted());
  const attempt = (n: number): void => {
    if (ex.aborted) return; // the previous attempt's handler already finished on the abort
    const again =
      retry !== null && n < retry.attempts
        ? { statuses: retry.statuses, next: () => void setTimeout(() => attempt(n + 1), retry.backoffMs * 2 ** (n - 1)) }
        : null;
    const headersMs = flow?.timeouts?.headersMs ?? spec.headersMs;
    const handler = new ProxyHandler(ex, flow, env, done, again, headersMs < PRECISE_HEADERS_BELOW_MS ? headersMs : 0);
    current = handler;
    try {
      pools.pick().dispatch(
        {
          path: flow === null ? target(ex.url, ex.query) : target(flow.path, flow.query),
          method: ex.method as Dispatcher.HttpMethod,
          headers: upstreamHeaders(ex, flow === null ? null : flow.editPlan()),
          body,
          headersTimeout: headersMs,
          bodyTimeout: flow?.timeouts?.bodyMs ?? spec.bodyMs,
          // A request with a streamed body is not safe to replay on another connection.
          idempotent: body === null && (ex.method === 'GET' || ex.method === 'HEAD'),
        },
        handler,
      );
    } catch (err) {
      handler.onError(err as Error);
    }
  };
  attempt(1);
}

function target(path: string, query: string | null): string {
  return query === null ? path : `${path}?${query}`;
}
