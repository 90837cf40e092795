import type { ResponseSink, StallWatch, Trailers } from './engine/contract.js';
import { ExchangeHead } from './exchange-head.js';
import type { RequestBody } from './request-body.js';
import { SendStall } from './send-stall.js';
import type { DataPortLimits } from '../contracts/ipc.js';
import type { LimitEvents } from './limit-events.js';

/**
 * A response body's writes, handed to the engine's downstream (engine/contract.ts): the
 * held head with the first bytes, backpressure through onDrain, a held write bounded by
 * limits.sendTimeoutMs (send-stall.ts).
 */
export abstract class ExchangeWrites extends ExchangeHead implements ResponseSink {
  /** limits.sendTimeoutMs over a write held by backpressure; made on first need. */
  protected stall: SendStall | null = null;
  bytesSent = 0;
  protected abstract readonly upload: RequestBody;
  protected abstract readonly closing: () => boolean;
  protected abstract readonly limits: DataPortLimits;
  protected abstract readonly events: LimitEvents;
  abstract get ended(): boolean;
  /** The exchange settled: its final status is decided (exchange-end.ts). */
  protected abstract settle(): void;
  /** The client is gone: the exchange ends with 499 and its abort hooks run (exchange-end.ts). */
  protected abstract clientLeft(): void;
  /** The engine's word (ResponseSink): the response's last byte went out. */
  responseCompleted(): void {
    this.settle();
  }

  /** The engine's ask (ResponseSink): the stall bound of this response's held writes, made on first need. */
  stallWatch(): StallWatch {
    return (this.stall ??= new SendStall(this.limits.sendTimeoutMs, () => this.stalled()));
  }

  /**
   * The client took no byte of a held write for limits.sendTimeoutMs: the connection is
   * closed, and the request ends as one whose client did not take the answer (499); the
   * abort hooks cut its upstream.
   */
  private stalled(): void {
    if (this.aborted || this.ended) return;
    this.events.hit('sendTimeout', { timeoutMs: this.limits.sendTimeoutMs, sent: this.bytesSent });
    this.down.close();
    this.clientLeft(); // when the engine did not report the abort from close()
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
    // A close is asked for only with the head.
    const mayClose = !this.headFlushed;
    const head = this.takeHead();
    this.bytesSent += chunk.length;
    // A known length may end the response with this write: the upload's rest is read and dropped.
    if (total !== null) this.upload.release();
    return this.down.write(head, this.idEcho, chunk, total, mayClose && this.closing(), onDrain, this);
  }

  /**
   * Ends a streamed response, with `trailers` where the client's protocol carries them
   * (engine/contract.ts): a no-op if the engine already completed it, or if part of a
   * known-length body still waits for the socket (the engine completes it).
   */
  end(trailers: Trailers | null = null): void {
    if (this.aborted || this.done) return;
    const close = !this.headFlushed && this.closing();
    this.upload.release();
    const completed = this.down.end(this.takeHead(), this.idEcho, close, trailers);
    // Nothing more is written, even while the engine still sends the tail: a failure
    // reported after this (an upstream call cancelled at a deadline) cannot cut the answer.
    this.done = true;
    if (completed) this.settle();
  }

  /** Ends a response that has no body (HEAD, 204, 304), reporting `contentLength` if known. */
  endWithoutBody(contentLength: number | undefined): void {
    if (this.aborted || this.done) return;
    this.upload.release();
    const head = this.takeHead();
    if (head === null) {
      if (this.down.end(null, this.idEcho, false)) this.settle();
      return;
    }
    this.done = true;
    this.down.reply(head, this.idEcho, null, contentLength, this.closing(), this);
  }
}
