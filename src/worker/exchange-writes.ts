import { fitsCork, writeChunked } from './cork-room.js';
import { ExchangeHead } from './exchange-head.js';
import type { RequestBody } from './request-body.js';
import { SendStall } from './send-stall.js';
import type { DataPortLimits } from '../contracts/ipc.js';
import type { LimitEvents } from './limit-events.js';

/**
 * A response body's writes under uWS's rules (see exchange.ts): corked, tryEnd + onWritable
 * under backpressure, a held write bounded by limits.sendTimeoutMs (send-stall.ts).
 */
export abstract class ExchangeWrites extends ExchangeHead {
  /** Part of a known-length chunk waits for the socket (tryEnd was short; onWritable retries it). */
  private tailPending = false;
  /** limits.sendTimeoutMs over a write held by backpressure; made on first need. */
  protected stall: SendStall | null = null;
  bytesSent = 0;
  protected abstract readonly upload: RequestBody;
  protected abstract readonly closing: () => boolean;
  protected abstract readonly limits: DataPortLimits;
  protected abstract readonly events: LimitEvents;
  abstract get ended(): boolean;
  /** The exchange ended: its final status is decided (exchange.ts). */
  protected abstract finish(): void;
  /** The client is gone: the exchange ends with 499 and its abort hooks run (exchange.ts). */
  protected abstract clientLeft(): void;

  /** The stall bound of this response's held writes (send-stall.ts). */
  protected get sendStall(): SendStall {
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
    this.res.close();
    this.clientLeft(); // when uWS did not call the abort handler from close()
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


}
