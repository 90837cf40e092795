import type { Dispatcher } from 'undici';
import type { ConnectionAware } from './target-pool.js';
import type { Upstream } from '../contracts/upstream.js';
import type { ClusterPools } from './upstream-pools.js';
import type { RequestOwner } from './request-owner.js';
import { sendAgain } from './send-again.js';
import { RetryHandler } from './retry-handler.js';
import { HandlerWrapper } from './handler-wrapper.js';
import type { RetryPolicy } from './retry-policy.js';
import { errorType, type CallTrace } from '../steps/step.js';
import { failureKind } from './upstream-failure.js';


/**
 * One request on its way upstream, as the outermost handler of every attempt it makes:
 * it dispatches the attempts (one, or the retry step's), each with a fresh handler
 * chain for its answer, and sends the request once more on a new connection (re-send)
 * or to another target (failover) when an attempt failed before any answer
 * (send-again.ts says when). A re-send or failover comes first and is not a retry attempt.
 */
export class Forwarding extends HandlerWrapper implements ConnectionAware {
  /** What goes to undici for every attempt: this, or a HeadersDeadline around it. */
  private outer: Dispatcher.DispatchHandler = this;
  /** The current attempt's number and target. */
  private n = 1;
  private target: Upstream | null = null;
  private resent = false;
  private failedOver = false;
  // The current attempt, as send-again.ts judges it.
  private conn: Upstream | null = null;
  private reused = false;
  /** undici handed the request to a socket (onConnect): from then on bytes may have reached the upstream. */
  private written = false;
  /** The answer's head arrived (any status). */
  private answered = false;
  private abortUpstream: ((err?: Error) => void) | null = null;
  /** When the current attempt was dispatched (performance.now()). */
  private sentAt = 0;
  /** The current attempt's span (a traced request only), and its answer's status. */
  private call: CallTrace | null = null;
  private status = 0;

  constructor(
    private readonly life: RequestOwner,
    private readonly pools: ClusterPools,
    private readonly opts: Dispatcher.DispatchOptions,
    /** No body, or one held whole: it can go out again. A streamed body is read once. */
    private readonly replayable: boolean,
    /** The retry step's policy, for a replayable request; else null. */
    private readonly retry: RetryPolicy | null,
  ) {
    // `inner`, the current attempt's handler chain (retry, collect, relay), is set by each attempt.
    super(null!);
  }

  /** Sends the first attempt; `outer` is the handler undici gets (this, or a wrapper around it). */
  start(upstream: Upstream, outer: Dispatcher.DispatchHandler): void {
    this.outer = outer;
    this.attempt(1, upstream);
  }

  /** Sends attempt `n` to `upstream` (a target pool, or the very connection a re-send goes on). */
  private attempt(n: number, upstream: Upstream, resendOn?: Upstream): void {
    if (this.life.aborted) return; // the previous attempt already finished the request on the abort
    const retry = this.retry;
    const answer = this.life.upstreamResponse();
    this.inner =
      retry !== null && n < retry.attempts
        ? new RetryHandler(answer, this.life, retry, () => void setTimeout(() => this.attempt(n + 1, this.nextTarget(retry, upstream)), retry.backoffMs * 2 ** (n - 1)))
        : answer;
    this.n = n;
    this.target = upstream;
    this.conn = null;
    this.reused = false;
    this.written = false;
    this.answered = false;
    this.abortUpstream = null;
    this.sentAt = performance.now();
    const trace = this.life.trace;
    if (trace !== null && trace.recording) {
      // Each attempt is a span of its own, whose id the upstream gets: the headers end with traceparent (upstreamHeaders).
      this.call = trace.call(this.opts.method, this.pools.addressOf(upstream));
      const h = this.opts.headers as string[];
      h[h.length - 1] = this.call.traceparent;
    }
    try {
      (resendOn ?? upstream).dispatch(this.opts, this.outer);
    } catch (err) {
      this.outer.onError!(err as Error);
    }
  }

  /** Where a retry goes: another target for a cluster's policy, else the cluster's next pick. */
  private nextTarget(retry: RetryPolicy, failed: Upstream): Upstream {
    return retry.elsewhere && this.pools.size > 1 ? this.pools.pickOther(failed) : this.pools.pick(this.life);
  }

  /** The client left: the upstream request is aborted and the request ends now. */
  clientAborted(): void {
    this.abortUpstream?.(new Error('client aborted'));
    this.life.finish();
  }

  /** The pool tells which connection the attempt goes on (ConnectionAware). */
  onConnection(conn: Upstream, reused: boolean): void {
    this.conn = conn;
    this.reused = reused;
    // A request that waited in the pool's queue had an onConnect from the queue (its abort), not from a socket.
    this.written = false;
  }

  override onConnect(abort: (err?: Error) => void): void {
    this.written = true;
    this.abortUpstream = abort;
    super.onConnect(abort);
    if (this.life.aborted) abort(new Error('client aborted'));
  }

  override onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    this.answered = true;
    if (statusCode < 200) return true; // 1xx: not relayed
    this.life.grpc?.upstreamFields(raw);
    this.status = statusCode;
    const ms = performance.now() - this.sentAt;
    const ex = this.life;
    ex.upstream = this.pools.addressOf(this.target!);
    ex.upstreamMs = ms;
    this.pools.answered(this.target!, ms, statusCode);
    this.pools.outcome(this.target!, statusCode);
    return super.onHeaders(statusCode, raw, resume, statusMessage);
  }

  override onComplete(trailers: string[] | null): void {
    this.life.grpc?.upstreamFields(trailers);
    this.call?.end(this.status);
    super.onComplete(trailers);
  }

  override onError(err: Error): void {
    this.call?.fail(errorType(err));
    if (!this.answered && !this.life.aborted) {
      this.pools.outcome(this.target!, null);
      this.pools.failed(this.target!, err);
      // No answer from this attempt: an earlier attempt's answer is not the one the client gets either.
      this.life.upstream = null;
      this.life.upstreamMs = null;
    } else if (this.answered && !this.life.aborted && cutOff(err)) {
      // The target cut its answer or stopped sending it: a failed attempt too (the client sees the cut).
      this.pools.failed(this.target!, err);
    }
    if (!this.answered && !this.life.aborted && this.sentAgain(err)) return;
    super.onError(err);
  }

  /** Sends the request once more after `err` when send-again.ts allows: true when it went out. */
  private sentAgain(err: Error): boolean {
    const next = sendAgain({
      err,
      method: this.life.method,
      replayable: this.replayable,
      written: this.written,
      answered: this.answered,
      reused: this.reused,
      resent: this.resent,
      failedOver: this.failedOver,
      otherTarget: this.pools.size > 1,
    });
    if (next === 'resend' && this.conn !== null) {
      // Now, from undici's onError: the connection is still this request's, and its socket
      // is gone, so undici opens a new one for it.
      this.resent = true;
      this.attempt(this.n, this.target!, this.conn);
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

/** An answer's body ended by the target: its connection closed, or it stopped sending (a gateway-side abort is not one). */
function cutOff(err: Error): boolean {
  const kind = failureKind(err);
  return kind === 'reset' || kind === 'timeout';
}
