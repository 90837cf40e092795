import type { Dispatcher } from 'undici';
import type { RequestOwner } from './request-owner.js';
import { retriable } from './upstream-failure.js';
import { HandlerWrapper } from './handler-wrapper.js';
import type { RetryPolicy } from './retry-policy.js';

/**
 * A retry policy (the retry step's, or the cluster's within its budget) around one attempt that may be followed by another (a replayable
 * request, attempts left): an answer whose status retries is read to its end and
 * dropped, so its connection stays reusable, and a retriable failure before the head
 * went out starts the next attempt; anything else goes to the wrapped handler.
 */
export class RetryHandler extends HandlerWrapper {
  /** This attempt's answer is being dropped: another attempt follows. */
  private discarding = false;

  constructor(
    inner: Dispatcher.DispatchHandler,
    private readonly life: RequestOwner,
    private readonly policy: RetryPolicy,
    /** Starts the next attempt (after the backoff). */
    private readonly next: () => void,
  ) {
    super(inner);
  }

  override onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    if (this.policy.statuses.has(statusCode) && this.mayRetry()) {
      this.discarding = true;
      return true;
    }
    return super.onHeaders(statusCode, raw, resume, statusMessage);
  }

  override onData(chunk: Buffer): boolean {
    return this.discarding ? true : super.onData(chunk);
  }

  override onComplete(trailers: string[] | null): void {
    if (this.discarding) return this.retryNow();
    super.onComplete(trailers);
  }

  override onError(err: Error): void {
    const ex = this.life;
    if (!ex.aborted && !ex.headersSent && (this.discarding || ((this.policy.errors ?? retriable)(err) && this.mayRetry()))) return this.retryNow();
    super.onError(err);
  }

  /** The cluster's budget has room (the retry step has none to ask). */
  private mayRetry(): boolean {
    return this.policy.budget === undefined || this.policy.budget.tryRetry();
  }

  private retryNow(): void {
    if (this.life.aborted) return this.life.finish();
    this.next();
  }
}
