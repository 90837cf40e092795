import { Readable } from 'node:stream';
import type { DataPortLimits } from '../contracts/ipc.js';
import type { ErrorCode } from '../shared/errors.js';
import type { LimitEvents } from './limit-events.js';
import type { Downstream } from './engine/contract.js';

/** The body broke a data-port limit (too large, or stopped arriving): the answer is `code`. */
export class RequestBodyRefused extends Error {
  constructor(readonly code: Extract<ErrorCode, 'Svc.Data.BodyTooLarge' | 'Svc.Data.BodyTimeout'>) {
    super(code === 'Svc.Data.BodyTooLarge' ? 'the request body is over limits.maxBodyBytes' : 'the request body stopped arriving (limits.bodyTimeoutMs)');
  }
}

/**
 * The request body of one exchange as its engine delivers it (onData, pause/resume), read into a
 * stream with backpressure: when the stream's buffer is full the socket is paused until
 * the consumer reads. `open` while bytes of it may still arrive: the answer must then ask
 * to close the connection. The data port's limits apply here: a body past maxBodyBytes,
 * or a gap between two pieces longer than bodyTimeoutMs, ends the stream with
 * RequestBodyRefused.
 */
export class RequestBody {
  open = false;
  /** No gap bound between pieces: a gRPC call's stream may rest for as long as the call lives (its deadline bounds it). */
  untimed = false;
  /** The upload is paused for backpressure (the stream's reader is behind). */
  private paused = false;
  /** Body bytes read from the client so far. */
  received = 0;
  private timer: NodeJS.Timeout | null = null;
  private body: Readable | null = null;

  constructor(
    private readonly res: Downstream,
    /** The exchange is over (answered or aborted): the response may not be touched. */
    private readonly over: () => boolean,
    private readonly aborted: () => boolean,
    private readonly limits: DataPortLimits,
    private readonly events: LimitEvents,
  ) {}

  /** Must be called synchronously in the request callback: an engine drops body data that has no onData handler. */
  stream(highWaterMark: number): Readable {
    this.open = true;
    const stream = new Readable({
      highWaterMark,
      read: () => {
        if (this.paused && !this.over()) this.resume();
      },
      destroy: (err, done) => {
        this.stopTimer();
        done(err);
      },
    });
    this.body = stream;
    this.waitFor(stream);
    this.res.onData((ab, last) => {
      // The answer may be complete before the body (an upstream answering early): the rest
      // is dropped, and the finished response never touched again (uWS throws).
      if (this.over() || stream.destroyed) {
        if (last) this.open = false;
        if (!stream.destroyed) stream.destroy();
        return;
      }
      this.received += ab.byteLength;
      if (this.received > this.limits.maxBodyBytes) {
        this.events.hit('maxBodyBytes', { received: this.received });
        stream.destroy(new RequestBodyRefused('Svc.Data.BodyTooLarge'));
        if (last) this.open = false;
        return;
      }
      // uWS's ArrayBuffer is only valid during this callback: copied; node's Buffer is ours.
      if (!stream.push(Buffer.isBuffer(ab) ? ab : Buffer.from(ab.slice(0))) && !last && !this.paused) {
        this.paused = true;
        this.res.pause();
      }
      if (last) {
        this.open = false;
        this.stopTimer();
        stream.push(null);
      } else if (!this.paused) this.timer?.refresh();
      else this.stopTimer();
    });
    // The error tells a reader the body will never end; before one reads (an async step, a
    // wait for a connection), this listener keeps Node from throwing it and ending the worker.
    stream.on('error', ignore);
    return stream;
  }

  /**
   * Before a write that may end the response (an upstream answering before the upload's
   * end): a paused upload is resumed so its rest is read and dropped, else the connection's
   * next request hangs; uWS may have delivered the last piece after the pause, so this
   * holds whether or not the body is still open. If the body is still wanted, onData
   * pauses it again.
   */
  release(): void {
    if (this.paused && !this.aborted()) this.resume();
  }

  private resume(): void {
    this.paused = false;
    this.res.resume();
    if (this.open && this.timer === null && this.body && !this.body.destroyed) this.waitFor(this.body);
  }

  /** The gap allowed between two pieces of the body (none while paused: then the reader is slow, not the client). */
  private waitFor(stream: Readable): void {
    if (this.untimed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.paused || !this.open || stream.destroyed) return;
      this.events.hit('bodyTimeout', { timeoutMs: this.limits.bodyTimeoutMs, received: this.received });
      stream.destroy(new RequestBodyRefused('Svc.Data.BodyTimeout'));
    }, this.limits.bodyTimeoutMs);
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

function ignore(): void {}
