import type { Dispatcher } from 'undici';
import type { Readable } from 'node:stream';
import type { Exchange } from './exchange.js';
import type { ClusterPools } from './upstream-pools.js';
import type { Upstream } from './target-pool.js';
import { upstreamHeaders } from './upstream-request-headers.js';
import type { RequestFlow } from './flow.js';
import { PRECISE_HEADERS_BELOW_MS, ProxyHandler, type AttemptOwner, type ProxyEnv } from './proxy-handler.js';
import { sendAgain } from './send-again.js';

/**
 * The proxy stage: always last, no settings. The upstream gets the normalised path (the
 * one the route matched, or path-rewrite's) and the query byte for byte; hop-by-hop headers are dropped both ways; X-Forwarded-* are set; both
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
  const forwarding = new Forwarding(ex, pools, body, flow, env, done);
  ex.onAbort(() => forwarding.clientAborted());
  forwarding.attempt(1, pools.pick());
}

/**
 * One request on its way upstream: its attempts (one, or the retry step's), plus at
 * most one re-send on a new connection and one failover to another target when an
 * attempt fails before any answer (send-again.ts says when).
 */
class Forwarding implements AttemptOwner {
  private readonly opts: Dispatcher.DispatchOptions;
  private readonly replayable: boolean;
  private readonly retry: RequestFlow['retry'];
  private readonly headersMs: number;
  private current: ProxyHandler | null = null;
  /** The current attempt's number and target. */
  private n = 1;
  private target: Upstream | null = null;
  private resent = false;
  private failedOver = false;

  constructor(
    private readonly ex: Exchange,
    private readonly pools: ClusterPools,
    body: Readable | Buffer | null,
    private readonly flow: RequestFlow | null,
    private readonly env: ProxyEnv,
    private readonly done: () => void,
  ) {
    this.replayable = body === null || Buffer.isBuffer(body); // a streamed body is read once
    this.retry = this.replayable ? (flow?.retry ?? null) : null;
    this.headersMs = flow?.timeouts?.headersMs ?? pools.spec.headersMs;
    this.opts = {
      path: flow === null ? target(ex.path, ex.query) : target(flow.path, flow.query),
      method: ex.method as Dispatcher.HttpMethod,
      headers: upstreamHeaders(ex, flow === null ? null : flow.editPlan()),
      body,
      headersTimeout: this.headersMs,
      bodyTimeout: flow?.timeouts?.bodyMs ?? pools.spec.bodyMs,
      // undici's pipelining guard: a request with a streamed body is not safe to replay on another connection.
      idempotent: this.replayable && (ex.method === 'GET' || ex.method === 'HEAD'),
    };
  }

  clientAborted(): void {
    this.current?.clientAborted();
  }

  /** Sends attempt `n` to `upstream` (a target pool, or the very connection a re-send goes on). */
  attempt(n: number, upstream: Upstream, resendOn?: Dispatcher): void {
    if (this.ex.aborted) return; // the previous attempt's handler already finished on the abort
    const retry = this.retry;
    const again =
      retry !== null && n < retry.attempts
        ? { statuses: retry.statuses, next: () => void setTimeout(() => this.attempt(n + 1, this.pools.pick()), retry.backoffMs * 2 ** (n - 1)) }
        : null;
    const headersMs = this.headersMs;
    const handler = new ProxyHandler(this.ex, this.flow, this.env, this.done, again, headersMs < PRECISE_HEADERS_BELOW_MS ? headersMs : 0, this);
    this.current = handler;
    this.n = n;
    this.target = upstream;
    try {
      (resendOn ?? upstream).dispatch(this.opts, handler);
    } catch (err) {
      handler.onError(err as Error);
    }
  }

  sentAgain(err: Error, failed: ProxyHandler): boolean {
    const next = sendAgain({
      err,
      method: this.ex.method,
      replayable: this.replayable,
      written: failed.written,
      answered: failed.answered,
      reused: failed.reused,
      resent: this.resent,
      failedOver: this.failedOver,
      otherTarget: this.pools.size > 1,
    });
    if (next === 'resend' && failed.conn !== null) {
      // Now, from undici's onError: the connection is still this request's, and its socket
      // is gone, so undici opens a new one for it.
      this.resent = true;
      this.attempt(this.n, this.target!, failed.conn);
      return true;
    }
    if (next === 'failover') {
      this.failedOver = true;
      this.attempt(this.n, this.pools.pickOther(this.target!));
      return true;
    }
    return false;
  }
}

function target(path: string, query: string | null): string {
  return query === null ? path : `${path}?${query}`;
}
