import { errors, type Dispatcher } from 'undici';
import type { ConnectionAware } from './target-pool.js';
import type { Upstream } from '../contracts/upstream.js';
import type { RequestOwner } from './request-owner.js';
import { HandlerWrapper } from './handler-wrapper.js';

/** Headers deadlines below this get the precise timer of HeadersDeadline; longer ones keep undici's. */
export const PRECISE_HEADERS_BELOW_MS = 10_000;

/**
 * A short headers deadline (a timeout step's `headersMs: 100`), kept to the millisecond:
 * undici runs its own on a coarse clock, about a second late. It wraps a request's
 * Forwarding and fails the current attempt as undici's own timeout would (504,
 * retriable). Each attempt's deadline runs from its last request byte (onRequestSent),
 * so a slow upload is not counted against the upstream.
 */
export class HeadersDeadline extends HandlerWrapper<Dispatcher.DispatchHandler & ConnectionAware> implements ConnectionAware {
  private timer: NodeJS.Timeout | null = null;
  private abortUpstream: ((err?: Error) => void) | null = null;
  /** This attempt's head arrived: an upload still being sent starts no timer. */
  private met = false;

  constructor(
    inner: Dispatcher.DispatchHandler & ConnectionAware,
    private readonly ms: number,
    private readonly life: RequestOwner,
  ) {
    super(inner);
  }

  onConnection(conn: Upstream, reused: boolean): void {
    this.inner.onConnection(conn, reused);
  }

  override onConnect(abort: (err?: Error) => void): void {
    this.abortUpstream = abort;
    this.met = false;
    super.onConnect(abort);
  }

  onRequestSent(): void {
    if (this.met || this.life.finished) return;
    const ms = this.ms;
    this.timer = setTimeout(() => {
      this.timer = null;
      const err = new errors.HeadersTimeoutError(`no response headers within ${ms} ms`);
      this.abortUpstream?.(err);
    }, ms);
  }

  override onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    // A 1xx is not the answer's head: the deadline still runs.
    if (statusCode >= 200) {
      this.met = true;
      this.clear();
    }
    return super.onHeaders(statusCode, raw, resume, statusMessage);
  }

  override onError(err: Error): void {
    this.clear();
    super.onError(err);
  }

  private clear(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }
}
