import { Readable } from 'node:stream';
import { upgradeLater, type HttpRequest, type HttpResponse, type us_socket_context_t } from './uws.js';
import { bodylessHead, headBlock, isBodylessStatus, statusLine, type StaticReply } from './response-head.js';
import { endWithTryEnd, fitsCork, writeChunked } from './cork-room.js';
import { requestCallback } from './request-callback.js';
import { ExchangeRequest } from './exchange-request.js';
import { RequestBody } from './request-body.js';
import type { TrustedProxies } from './trusted-proxies.js';
import type { DataPortLimits } from '../contracts/ipc.js';
import type { LimitEvents } from './limit-events.js';
import type { RouteMeter } from './observe/meters.js';
import type { RequestTrace } from './observe/request-trace.js';
import { finalStatus } from './final-status.js';
import { SendStall } from './send-stall.js';

/** Who is told when an exchange ended (its RequestLife): its final status is then decided. */
export interface ExchangeOwner {
  exchangeEnded(): void;
}

/**
 * The uWS rules, in one place. uWS hands out a request object that is valid only
 * during the synchronous callback and a response that dies on abort; everything
 * else in the worker talks to an Exchange and never to uWS directly:
 *  - the request is copied synchronously (exchange-request.ts, request-head.ts), without
 *    the identity headers of a peer that is not a trusted proxy (client-address.ts);
 *  - onAborted is registered before anything can await;
 *  - every write is corked (writes after an await must be);
 *  - a response head (status line and headers) goes out in one writeStatus call (headBlock);
 *  - response bodies go through tryEnd/write + onWritable (backpressure); no non-optional
 *    write is larger than uWS's cork buffer (cork-room.ts), and nothing is written from
 *    inside a writable callback but the tail that callback is for; a write held by
 *    backpressure waits at most limits.sendTimeoutMs for the client to take a byte (send-stall.ts);
 *  - request bodies go through onData + pause/resume (backpressure);
 *  - nothing is written after an abort or after the end;
 *  - no exception escapes into uWS (DataServer wraps each handler).
 */

export class Exchange extends ExchangeRequest {
  private headFlushed = false;
  /** Status line and headers waiting to go out with the first body bytes (one send, not two). */
  private pendingHead: { line: string; headers: [string, string][] } | null = null;
  private readonly upload: RequestBody;
  /** Part of a known-length chunk waits for the socket (tryEnd was short; onWritable retries it). */
  private tailPending = false;
  private abortHooks: (() => void)[] | null = null;
  /** limits.sendTimeoutMs over a write held by backpressure; made on first need. */
  private stall: SendStall | null = null;
  /** A WebSocket handshake's uWS context (set by DataServer's upgrade handler, needed by res.upgrade); null on any other request. */
  upgradeContext: us_socket_context_t | null = null;
  // What the metrics and the access log read when the exchange ends (observe/observer.ts).
  readonly startedAt = performance.now();
  /** The status the client was sent (0 until a head went out). */
  status = 0;
  /**
   * The status the request ended with, decided once when the exchange ends (final-status.ts)
   * and read by every consumer: metrics, access log, trace, done hooks. 0 while it runs.
   */
  finalStatus = 0;
  /** Told when the exchange ended; null: no route's terminal took it. */
  owner: ExchangeOwner | null = null;
  /** The status a response cut after its head ends with (close()); 0: not cut. */
  private cutStatus = 0;
  private hasEnded = false;
  bytesSent = 0;
  /** The route's meter, set by its terminal; null: no route took the request. */
  meter: RouteMeter | null = null;
  /** The last attempt's target and its time to the answer's head. */
  upstream: string | null = null;
  upstreamMs: number | null = null;
  /** The request's W3C trace, set by its RequestLife; null: no route's terminal took it. */
  trace: RequestTrace | null = null;
  /** The access log writes this request's line (it was sampled). */
  logged = false;

  constructor(
    res: HttpResponse,
    req: HttpRequest,
    method: string,
    path: string,
    /** Worker-wide: a draining worker asks clients to close their connection. */
    private readonly closing: () => boolean,
    private readonly onFinish: (ex: Exchange) => void,
    /** worker.json's trustedProxies. */
    proxies: TrustedProxies,
    /** The data port, as X-Forwarded-Port gives it ('' when unknown). */
    localPort: string,
    private readonly limits: DataPortLimits,
    private readonly events: LimitEvents,
    /** How the request came: X-Forwarded-Proto. */
    scheme: 'http' | 'https' = 'http',
  ) {
    super(res, req, method, path, proxies, localPort, scheme);
    this.upload = new RequestBody(res, () => this.done || this.aborted, () => this.aborted, limits, events);
    if (this.badFraming) this.upload.open = true; // its body's bytes will not be read: the connection must close after the answer
    res.onAborted(() => this.clientLeft());
  }

  /** uWS's abort: the client went away (or the gateway closed on it) before the response ended. */
  private clientLeft(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.finish();
    if (this.abortHooks) for (const h of this.abortHooks) h();
  }

  /** The stall bound of this response's held writes (send-stall.ts). */
  private get sendStall(): SendStall {
    return (this.stall ??= new SendStall(this.limits.sendTimeoutMs, () => this.stalled()));
  }

  /**
   * The client took no byte of a held write for limits.sendTimeoutMs: the connection is
   * closed, and the request ends as one whose client did not take the answer (499); the
   * abort hooks cut its upstream.
   */
  private stalled(): void {
    if (this.aborted || this.hasEnded) return;
    this.events.hit('sendTimeout', { timeoutMs: this.limits.sendTimeoutMs, sent: this.bytesSent });
    this.res.close();
    this.clientLeft(); // when uWS did not call the abort handler from close()
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
    const stream = this.upload.stream(highWaterMark);
    this.onAbort(() => stream.destroy(new Error('client aborted')));
    return stream;
  }

  /** A complete response in one corked write. Ignored once aborted or done. */
  send(status: number, body: string | Buffer, headers?: Record<string, string>): void {
    this.sendHead(status, body, headers ? Object.entries(headers) : []);
  }

  /** Like send, with headers as a list (repeated names allowed). */
  sendHead(status: number, body: string | Buffer, headers: [string, string][]): void {
    if (this.aborted || this.done) return;
    this.status = status;
    const head = headBlock(statusLine(status), this.idEcho === '' ? headers : this.withoutId(headers)) + this.idEcho;
    if (isBodylessStatus(status)) this.sendNoBody(head);
    else this.sendBlock(head, body);
  }

  /** A response fixed at compile time whose body is too large to go out from the request callback (see DataServer). */
  sendStatic(r: StaticReply): void {
    if (this.aborted || this.done) return;
    this.status = r.status;
    if (r.bodyless) this.sendNoBody(r.head + this.idEcho);
    else this.sendBlock(r.head + this.idEcho, r.body);
  }

  /** A 204 or 304 the gateway answers itself: no body and no length (a step's echo, a directResponse). */
  private sendNoBody(head: string): void {
    if (this.aborted || this.done) return;
    const close = this.closing() || this.upload.open;
    if (close && requestCallback.active) return void setImmediate(() => this.sendNoBody(head));
    this.pendingHead = null;
    this.endBodyless(head, undefined, close);
    this.finish();
  }

  private sendBlock(head: string, body: string | Buffer): void {
    if (this.aborted || this.done) return;
    // A body we did not read to the end makes the connection unusable: close it.
    const close = this.closing() || this.upload.open;
    // Inside uWS's parse a close is only a flag, and the bytes behind this request are read
    // as requests (after a framing refusal, a smuggled one): see request-callback.ts.
    if (close && requestCallback.active) return void setImmediate(() => this.sendBlock(head, body));
    this.pendingHead = null; // a held streamed head is replaced by this response
    if (this.method === 'HEAD') {
      // The length of the body a GET would get, never the body (RFC 9110 §9.3.2).
      this.endBodyless(head, typeof body === 'string' ? Buffer.byteLength(body) : body.length, close);
      return this.finish();
    }
    this.bytesSent += typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    if (fitsCork(head.length, body)) {
      this.res.cork(() => {
        this.res.writeStatus(head);
        this.res.end(body, close);
      });
      this.finish();
    } else {
      // Too large for one cork (see cork-room.ts): tryEnd, the rest when writable. uWS's
      // tryEnd cannot close the connection, so the head asks the client to. The response
      // completed once its last byte went out: a client leaving before that ends it with 499.
      this.done = true; // nothing more is written; the exchange ends with the last byte
      endWithTryEnd(this.res, close ? `${head}\r\nconnection: close` : head, typeof body === 'string' ? Buffer.from(body) : body, () => this.finish(), this.sendStall);
    }
  }

  sendJson(status: number, value: unknown, headers?: Record<string, string>): void {
    this.send(status, JSON.stringify(value), { 'content-type': 'application/json', ...headers });
  }

  /** The exchange ended (completed, cut, or left by its client): finalStatus is decided. */
  get ended(): boolean {
    return this.hasEnded;
  }

  /** The head reached the socket: from here on only cutting the connection can signal a failure. */
  get headersSent(): boolean {
    return this.headFlushed;
  }

  /**
   * Status and headers of a streamed response; the body follows through write/end.
   * uWS terminates the head only with the first body write, so the head is held and
   * written in the same cork as that write: one send instead of two.
   */
  writeHead(status: number, statusText: string | undefined, headers: [string, string][]): void {
    if (this.aborted || this.done) return;
    this.status = status;
    this.pendingHead = { line: statusLine(status, statusText), headers: this.idEcho === '' ? headers : this.withoutId(headers) };
  }

  /** `headers` without an upstream's or a step's copy of the request id's header: the exchange appends its own. */
  private withoutId(headers: [string, string][]): [string, string][] {
    const name = this.requestIdHeader;
    for (let i = 0; i < headers.length; i++) if (headers[i]![0] === name) return headers.filter(([k]) => k !== name);
    return headers;
  }

  /** The held head, taken: it goes out in the same cork as the first body bytes. */
  private takeHead(): string | null {
    const h = this.pendingHead;
    if (h === null) return null;
    this.pendingHead = null;
    this.headFlushed = true;
    return headBlock(h.line, h.headers) + this.idEcho;
  }

  /** Inside a cork: the held head, if any. */
  private flushHead(): void {
    const head = this.takeHead();
    if (head !== null) this.res.writeStatus(head);
  }

  /**
   * Writes a body chunk. `total` is the body length when known (the response is then
   * sent with Content-Length and ends when `total` bytes are written), null for a
   * chunked body. Returns false under backpressure: `onDrain` runs once the client
   * took everything, and the caller must stop producing until then.
   */
  write(chunk: Buffer, total: number | null, onDrain: () => void): boolean {
    if (this.aborted || this.done) return true;
    // In chunked mode a zero-length write is the terminating chunk: never pass one on.
    if (chunk.length === 0 && total !== 0) return true;
    // uWS writes a close asked at end() as a header line even after the head went out.
    const mayClose = !this.headFlushed;
    const head = this.takeHead();
    this.bytesSent += chunk.length;
    if (total === null) return writeChunked(this.res, chunk, head, onDrain, this.sendStall);
    const res = this.res;
    let ok = true;
    res.cork(() => {
      if (head !== null) res.writeStatus(head);
      if (chunk.length === total && fitsCork(head === null ? 0 : head.length, chunk)) {
        // The whole body in one chunk that fits uWS's cork buffer (most answers): end()
        // takes it in one call and one send.
        this.upload.release();
        res.end(chunk, mayClose && this.closing());
        return this.finish();
      }
      const start = res.getWriteOffset();
      this.upload.release();
      const [sent, finished] = res.tryEnd(chunk, total);
      if (finished) return this.finish();
      if (sent) return;
      ok = false;
      this.tailPending = true;
      const stall = this.sendStall;
      stall.held(res.getWriteOffset());
      res.onWritable((offset) => {
        // uWS keeps calling this until another onWritable replaces it: once this chunk is
        // out, a later writable event has nothing of it to send.
        if (offset - start >= chunk.length) return true;
        this.upload.release();
        const [retried, done] = res.tryEnd(chunk.subarray(offset - start), total);
        if (retried || done) this.tailPending = false;
        if (done) this.finish();
        else if (retried) stall.clear(); // what waits next is the producer, not the client
        else stall.held(res.getWriteOffset());
        // The producer resumes after this callback, never inside it: uWS puts the callback
        // it is running back over any onWritable registered meanwhile, so the next chunk's
        // would be lost and its unsent tail skipped (test/streaming-small-socket-buffers).
        if (retried || done) setImmediate(onDrain);
        return retried;
      });
    });
    return ok;
  }

  /**
   * Ends a streamed response: a no-op if tryEnd already completed it, or if part of a
   * known-length body still waits for the socket (the writable callback completes it).
   */
  end(): void {
    if (this.aborted || this.done || this.tailPending) return;
    // Only while the head is still held (see write()).
    const close = !this.headFlushed && this.closing();
    this.upload.release();
    this.res.cork(() => {
      this.flushHead();
      this.res.end(undefined, close);
    });
    this.finish();
  }

  /** Ends a response that has no body (HEAD, 204, 304), reporting `contentLength` if known. */
  endWithoutBody(contentLength: number | undefined): void {
    if (this.aborted || this.done) return;
    this.upload.release();
    this.endBodyless(this.takeHead(), contentLength, this.closing());
    this.finish();
  }

  /** The head (with the length, if known) and the end, no body: see bodylessHead for why this way. */
  private endBodyless(head: string | null, contentLength: number | undefined, close: boolean): void {
    this.res.cork(() => {
      if (head !== null) this.res.writeStatus(bodylessHead(head, contentLength, close));
      this.res.endWithoutBody(); // never with arguments: see bodylessHead
    });
  }

  /**
   * Completes a WebSocket handshake with 101 and the upstream's subprotocol (no extension:
   * frames are relayed as they are). uWS then calls the data server's `open` with `userData`.
   */
  upgrade<T>(userData: T, protocol: string): boolean {
    const ctx = this.upgradeContext;
    if (this.aborted || this.done || ctx === null) return false;
    const key = this.header('sec-websocket-key') ?? '';
    this.status = 101;
    const idEcho = this.idEcho;
    // uWS writes its own 101 line only if none was written: this one carries the request id (headBlock's way).
    upgradeLater(this.res, userData, key, protocol, ctx, idEcho === '' ? null : `101 Switching Protocols${idEcho}`);
    this.finish();
    return true;
  }

  /**
   * Cuts the connection: the only honest end for a response that failed after its head was
   * sent. `status`: the failure's (502, 504, …), the status the request ends with.
   */
  close(status: number): void {
    if (this.aborted || this.done) return;
    this.cutStatus = status;
    this.finish();
    this.res.close();
  }

  /** The exchange ended (completed, cut, or left by its client): its final status is decided here, once. */
  private finish(): void {
    if (this.hasEnded) return;
    this.hasEnded = true;
    this.done = true;
    this.stall?.clear();
    this.finalStatus = finalStatus(this.status, this.aborted, this.cutStatus);
    this.onFinish(this);
    this.owner?.exchangeEnded();
  }
}

