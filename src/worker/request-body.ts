import { Readable } from 'node:stream';
import type { HttpResponse } from './uws.js';

/**
 * The request body of one exchange as uWS delivers it (onData, pause/resume), read into a
 * stream with backpressure: when the stream's buffer is full the socket is paused until
 * the consumer reads. `open` while bytes of it may still arrive: the answer must then ask
 * to close the connection.
 */
export class RequestBody {
  open = false;
  /** The upload is paused for backpressure (the stream's reader is behind). */
  private paused = false;

  constructor(
    private readonly res: HttpResponse,
    /** The exchange is over (answered or aborted): the response may not be touched. */
    private readonly over: () => boolean,
    private readonly aborted: () => boolean,
  ) {}

  /** Must be called synchronously in the request callback: uWS drops body data that has no onData handler. */
  stream(highWaterMark: number): Readable {
    this.open = true;
    const stream = new Readable({
      highWaterMark,
      read: () => {
        if (this.paused && !this.over()) this.resume();
      },
    });
    this.res.onData((ab, last) => {
      // The answer may be complete before the body (an upstream answering early): the rest
      // is dropped, and the finished response never touched again (uWS throws).
      if (this.over()) {
        if (last) this.open = false;
        if (!stream.destroyed) stream.destroy();
        return;
      }
      // The ArrayBuffer is only valid during this callback: copy it.
      if (!stream.push(Buffer.from(ab.slice(0))) && !last) {
        this.paused = true;
        this.res.pause();
      }
      if (last) {
        this.open = false;
        stream.push(null);
      }
    });
    // The error tells a reader the body will never end; before one reads (an async step, a
    // wait for a connection), this listener keeps Node from throwing it and ending the worker.
    stream.on('error', ignore);
    return stream;
  }

  /**
   * Before a write that may end the response (an upstream answering before the upload's
   * end): a paused upload is resumed so its rest is read and dropped, else the connection's
   * next request hangs. If the body is still wanted, onData pauses it again.
   */
  release(): void {
    if (this.paused && this.open && !this.aborted()) this.resume();
  }

  private resume(): void {
    this.paused = false;
    this.res.resume();
  }
}

function ignore(): void {}
