import { Readable } from 'node:stream';
import type { Downstream, RequestHead } from './engine/contract.js';
import { ExchangeReplies } from './exchange-replies.js';
import { RequestBody } from './request-body.js';
import type { TrustedProxies } from './trusted-proxies.js';
import type { DataPortLimits } from '../contracts/ipc.js';
import type { LimitEvents } from './limit-events.js';
import type { RouteMeter } from './observe/meters.js';
import type { RequestTrace } from './observe/request-trace.js';
import { finalStatus } from './final-status.js';

/**
 * How a request's exchange with its client ends, whatever engine it came on
 * (engine/contract.ts): completed, cut, or left by its client, and the one place its final
 * status is decided. The Exchange (exchange.ts), the request's owner, is this with its
 * phases. Everything else in the worker talks to an Exchange, never to an engine:
 *  - the request is copied synchronously (exchange-request.ts, request-head.ts), without
 *    the identity headers of a peer that is not a trusted proxy (client-address.ts);
 *  - onAborted is registered before anything can await;
 *  - a streamed head is held and goes out with the first body bytes (exchange-head.ts);
 *  - response bodies go to the engine's downstream with backpressure (exchange-writes.ts,
 *    exchange-replies.ts); a write held by backpressure waits at most
 *    limits.sendTimeoutMs for the client to take a byte (send-stall.ts);
 *  - request bodies go through onData + pause/resume (backpressure);
 *  - nothing is written after an abort or after the end;
 *  - no exception escapes into the engine (DataServer wraps each request).
 */

export abstract class ExchangeEnd extends ExchangeReplies {
  protected override readonly upload: RequestBody;
  private abortHooks: (() => void)[] | null = null;
  // What the metrics and the access log read when the exchange ends (observe/observer.ts).
  readonly startedAt = performance.now();
  /**
   * The status the request ended with, decided once when the exchange ends (final-status.ts)
   * and read by every consumer: metrics, access log, trace, done hooks. 0 while it runs.
   */
  finalStatus = 0;
  /** The status a response cut after its head ends with (close()); 0: not cut. */
  private cutStatus = 0;
  private hasEnded = false;
  /** The route's meter, set by its terminal; null: no route took the request. */
  meter: RouteMeter | null = null;
  /** The last attempt's target and its time to the answer's head. */
  upstream: string | null = null;
  upstreamMs: number | null = null;
  /** The request's W3C trace, set when a cluster route's terminal began the request (exchange.ts); null: none did. */
  trace: RequestTrace | null = null;
  /** The access log writes this request's line (it was sampled). */
  logged = false;

  constructor(
    down: Downstream,
    req: RequestHead,
    method: string,
    path: string,
    /** Worker-wide: a draining worker asks clients to close their connection. */
    protected override readonly closing: () => boolean,
    private readonly onFinish: (ex: ExchangeEnd) => void,
    /** worker.json's trustedProxies. */
    proxies: TrustedProxies,
    /** The data port, as X-Forwarded-Port gives it ('' when unknown). */
    localPort: string,
    protected override readonly limits: DataPortLimits,
    protected override readonly events: LimitEvents,
    /** How the request came: X-Forwarded-Proto. */
    scheme: 'http' | 'https' = 'http',
  ) {
    super(down, req, method, path, proxies, localPort, scheme);
    this.upload = new RequestBody(down, () => this.done || this.aborted, () => this.aborted, limits, events);
    if (this.badFraming || this.hostRepeated) this.upload.open = true; // refused unread: the connection must close after the answer
    down.onAborted(() => this.clientLeft());
  }

  /** The engine's abort: the client went away (or the gateway closed on it) before the response ended. */
  protected override clientLeft(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.settle();
    this.cancelWork();
  }

  /** Stops the request's work as a client's leaving does (its upstream call aborted, its body stream destroyed), once. */
  protected cancelWork(): void {
    const hooks = this.abortHooks;
    this.abortHooks = null;
    if (hooks) for (const h of hooks) h();
  }

  /** Request body bytes read from the client. */
  get bytesReceived(): number {
    return this.upload.received;
  }

  onAbort(hook: () => void): void {
    (this.abortHooks ??= []).push(hook);
  }

  /** The request body as a stream (request-body.ts); call it synchronously in the request callback. */
  bodyStream(highWaterMark = 64 * 1024): Readable {
    this.upload.untimed = this.grpc !== null && this.grpc.routed;
    const stream = this.upload.stream(highWaterMark);
    this.onAbort(() => stream.destroy(new Error('client aborted')));
    return stream;
  }

  /** The exchange ended (completed, cut, or left by its client): finalStatus is decided. */
  override get ended(): boolean {
    return this.hasEnded;
  }

  /**
   * Cuts the connection: the only honest end for a response that failed after its head was
   * sent. `status`: the failure's (502, 504, …), the status the request ends with.
   */
  close(status: number): void {
    if (this.aborted || this.done) return;
    this.cutStatus = status;
    this.settle();
    this.down.close();
  }

  /** The exchange settled (completed, cut, or left by its client): its final status is decided here, once. */
  protected override settle(): void {
    if (this.hasEnded) return;
    this.hasEnded = true;
    this.done = true;
    this.stall?.clear();
    this.finalStatus = finalStatus(this.status, this.aborted, this.cutStatus);
    this.onFinish(this);
    this.exchangeEnded();
  }

  /** Phase 7's first half: the final status is decided (exchange.ts). */
  protected abstract exchangeEnded(): void;
}

