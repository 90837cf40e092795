import { errors, type Dispatcher } from 'undici';
import type { Exchange } from './exchange.js';
import { responseHeaders } from './upstream-head.js';
import { ERRORS } from '../shared/errors.js';
import type { RequestFlow } from './flow.js';
import type { Logger } from '../shared/logger.js';
import type { ConnectionAware } from './target-pool.js';
import { errorCode, retriable, UpstreamCodingError } from './upstream-failure.js';

/** What every attempt's handler of a generation shares. */
export interface ProxyEnv {
  traceId: () => string;
  log: Pick<Logger, 'warn'>;
}

const NO_BODY_STATUS = new Set([204, 304]);

/** The request an attempt belongs to (proxy.ts): it may send the request once more after a failure. */
export interface AttemptOwner {
  /** `failed` failed with `err` before any answer reached the client: true when the request went out again. */
  sentAgain(err: Error, failed: ProxyHandler): boolean;
}

/** Headers deadlines below this get a precise timer of their own (see the ProxyHandler constructor's headersMs). */
export const PRECISE_HEADERS_BELOW_MS = 10_000;

/**
 * One attempt's undici handler: relays the upstream's answer to the client as it comes
 * (head held until the first body bytes, body with backpressure both ways), or gathers
 * it whole for the flow's collectors, or drops it when a retry follows.
 *
 * It implements undici's own callback interface (onConnect, onHeaders, onData,
 * onComplete, onError), which undici 7 calls directly. A handler written against the
 * newer onRequestStart/onResponse* interface is wrapped per request in an adapter that
 * also parses the raw head into an object (and the trailers, even when empty); in the
 * bench's floor proxy that was 40.2 against 37.1 µs of CPU a request. The raw head is
 * read once, in upstream-head.ts, as name/value pairs in the upstream's order.
 */
export class ProxyHandler implements Dispatcher.DispatchHandler, ConnectionAware {
  /** The connection this attempt went on, and whether it had carried an earlier request (told by TargetPool). */
  conn: Dispatcher | null = null;
  reused = false;
  /** undici handed the request to a socket (onConnect): from then on bytes may have reached the upstream. */
  written = false;
  /** The answer's head arrived (any status). */
  answered = false;
  private abortUpstream: ((err?: Error) => void) | null = null;
  private resumeUpstream: (() => void) | null = null;
  private total: number | null = null;
  private status = 0;
  /** Body bytes received so far (counted only for a known length). */
  private received = 0;
  private bodyless = false;
  private finished = false;
  /** This attempt's answer is being dropped: another attempt follows. */
  private discarding = false;
  /** The answer is being gathered whole for the flow's collectors (cache, compression). */
  private gathering: { status: number; headers: [string, string][]; chunks: Buffer[] } | null = null;
  /** Resumes the upstream once the client took a chunk it could not take at once (made on first need). */
  private drained: (() => void) | null = null;

  constructor(
    private readonly ex: Exchange,
    private readonly flow: RequestFlow | null,
    private readonly env: ProxyEnv,
    private readonly done: () => void,
    /** Set when another attempt is allowed: which statuses retry, and how to start it. */
    private readonly again: { statuses: ReadonlySet<number>; next: () => void } | null = null,
    /**
     * The headers deadline in ms when it is short, else 0. undici runs its header and
     * body timeouts on a coarse clock (about a second), so a short deadline (timeout step
     * `headersMs: 100`) would pass 0.5 to 1 s late. Below PRECISE_HEADERS_BELOW_MS the
     * handler keeps its own timer for the headers; it fails the attempt as undici's own
     * headers timeout would (504, retriable). It starts when the request is sent
     * (onRequestSent).
     */
    private headersMs = 0,
    private readonly owner: AttemptOwner | null = null,
  ) {}

  onConnection(conn: Dispatcher, reused: boolean): void {
    this.conn = conn;
    this.reused = reused;
    // A request that waited in the pool's queue had an onConnect from the queue (its abort), not from a socket.
    this.written = false;
  }

  /** The precise headers deadline (see headersMs); null when undici's own timer is enough. */
  private headersTimer: NodeJS.Timeout | null = null;

  /**
   * undici calls this once the request's last byte is written (at once for a bodiless
   * one): the headers deadline runs from here, as undici's own does, so a slow upload is
   * not counted against the upstream.
   */
  onRequestSent(): void {
    if (this.headersMs === 0 || this.finished) return;
    const ms = this.headersMs;
    this.headersTimer = setTimeout(() => {
      this.headersTimer = null;
      const err = new errors.HeadersTimeoutError(`no response headers within ${ms} ms`);
      this.abortUpstream?.(err);
    }, ms);
  }

  private clearHeadersTimer(): void {
    if (this.headersTimer !== null) {
      clearTimeout(this.headersTimer);
      this.headersTimer = null;
    }
  }

  clientAborted(): void {
    this.abortUpstream?.(new Error('client aborted'));
    this.finish();
  }

  onConnect(abort: (err?: Error) => void): void {
    this.written = true;
    this.abortUpstream = abort;
    if (this.ex.aborted) abort(new Error('client aborted'));
  }

  onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    this.answered = true;
    if (statusCode < 200) return true; // 1xx: not relayed
    // The head is here: the deadline is met, also if the upload is still being sent.
    this.headersMs = 0;
    this.clearHeadersTimer();
    this.resumeUpstream = resume;
    if (this.again?.statuses.has(statusCode)) {
      this.discarding = true; // read and drop the body so the connection stays reusable
      return true;
    }
    const { headers: out, length, foreignCoding } = responseHeaders(raw);
    if (foreignCoding) {
      // A transfer coding undici does not undo (`gzip, chunked`): 502, as nginx and Envoy answer.
      this.abortUpstream?.(new UpstreamCodingError());
      return false;
    }
    this.total = length;
    this.status = statusCode;
    this.bodyless = this.ex.method === 'HEAD' || NO_BODY_STATUS.has(statusCode);
    if (this.flow) this.flow.status = statusCode;
    if (this.flow?.collectors && !this.bodyless && this.total !== null && this.total <= this.flow.collectLimit) {
      this.gathering = { status: statusCode, headers: out, chunks: [] };
      return true;
    }
    if (this.flow?.hasResponseHooks) {
      const head = { status: statusCode, headers: out };
      this.flow.applyResponseHooks(head);
      this.flow.status = head.status;
      this.ex.writeHead(head.status, head.status === statusCode ? statusMessage : undefined, head.headers);
      return true;
    }
    this.ex.writeHead(statusCode, statusMessage, out);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.discarding || this.bodyless || this.ex.aborted) return true;
    if (this.gathering) {
      this.gathering.chunks.push(chunk); // bounded by collectLimit
      return true;
    }
    // false pauses the upstream socket until drained() resumes it.
    // After the upstream answer completed, its connection may carry another request: a late drain must not resume that one.
    const more = this.ex.write(chunk, this.total, (this.drained ??= () => (this.finished ? undefined : this.resumeUpstream?.())));
    if (this.total !== null && (this.received += chunk.length) >= this.total) {
      // The last bytes: never pause undici here. If the upstream closes right after them
      // (Connection: close), undici 7 finishes its parser on the socket's end and asserts
      // that it is not paused: the throw killed the worker. Nothing more is coming to hold
      // back, and the Exchange finishes the tail it still has to send on its own.
      return true;
    }
    return more;
  }

  onComplete(): void {
    if (this.discarding) return this.retryNow();
    if (this.gathering) {
      const g = this.gathering;
      const a = this.flow!.collected({ status: g.status, headers: g.headers, body: Buffer.concat(g.chunks) });
      const head = { status: a.status, headers: a.headers };
      this.flow!.applyResponseHooks(head);
      this.flow!.status = head.status;
      this.ex.sendHead(head.status, a.body, head.headers);
      return this.finish();
    }
    // A 204 carries no Content-Length (RFC 9110 §8.6); HEAD and 304 report the upstream's.
    if (this.bodyless) this.ex.endWithoutBody(this.status === 204 ? undefined : (this.total ?? undefined));
    else this.ex.end(); // no-op when the last write already completed a known length
    this.finish();
  }

  onError(err: Error): void {
    this.clearHeadersTimer();
    // Before the retry step's attempts: a re-send or failover does not count as one.
    if (this.owner !== null && !this.answered && !this.ex.aborted && this.owner.sentAgain(err, this)) {
      this.finished = true; // the next handler answers the client and calls done
      return;
    }
    if (this.again && !this.ex.aborted && !this.ex.headersSent && (this.discarding || retriable(err))) return this.retryNow();
    if (!this.ex.aborted && !this.ex.done) {
      if (this.ex.headersSent) {
        // The client cannot be told with a status any more: it sees the connection cut.
        this.env.log.warn({ code: (err as { code?: string }).code, err: err.message, path: this.ex.path }, 'upstream failed after the response head was sent; client connection cut');
        this.ex.close();
      } else {
        const code = this.flow?.bodyTooLarge ? 'Svc.Data.TooLarge' : errorCode(err);
        if (this.flow) this.flow.status = ERRORS[code].status;
        this.ex.sendJson(ERRORS[code].status, { code, message: ERRORS[code].message, traceId: this.env.traceId() });
      }
    }
    this.finish();
  }

  private retryNow(): void {
    if (this.ex.aborted) return this.finish();
    this.again!.next();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.clearHeadersTimer();
    this.flow?.finish(this.ex.aborted);
    this.done();
  }
}
