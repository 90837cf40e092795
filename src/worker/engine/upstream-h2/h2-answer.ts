import type { ClientHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import type { Dispatcher } from 'undici';
import { flatTrailers, rawHead } from './h2-request-head.js';
import type { StreamDeadline } from './stream-deadline.js';

/**
 * The answer side of one HTTP/2 call, as undici's handler callbacks: the head (onHeaders
 * with the raw fields, 1xx heads too as undici passes them), the data (onData), each able
 * to pause the stream by returning false: a paused stream is not read, so its
 * flow-control window is not renewed and the upstream stops, until `resume`. Trailers are
 * kept for the call's onComplete. Nothing reaches the handler once the call is `over`; a
 * handler that throws fails the call with its error, as undici's parser does.
 */
export class H2Answer {
  paused = false;
  trailers: string[] | null = null;

  constructor(
    private readonly stream: ClientHttp2Stream,
    private readonly handler: Dispatcher.DispatchHandler,
    private readonly deadline: StreamDeadline,
    private readonly over: () => boolean,
    private readonly failed: (err: Error) => void,
  ) {
    stream.on('response', this.onResponse).on('headers', this.onInformational).on('data', this.onData).on('trailers', this.onTrailers);
  }

  readonly resume = (): void => {
    if (this.over() || !this.paused) return;
    this.paused = false;
    this.deadline.renew('body');
    this.stream.resume();
  };

  private readonly onResponse = (headers: IncomingHttpHeaders, _flags: number, raw: string[]): void => {
    if (this.over()) return;
    this.deadline.start('body');
    this.hand(() => this.handler.onHeaders!(Number(headers[':status']), rawHead(raw), this.resume, ''));
  };

  /** A 1xx head (103): handed on as undici does; the head's deadline still runs. */
  private readonly onInformational = (headers: IncomingHttpHeaders, _flags: number, raw: string[]): void => {
    const status = Number(headers[':status']);
    if (this.over() || !(status > 100 && status < 200)) return;
    // What it returns does not pause: the answer's own head is still to come.
    this.hand(() => {
      this.handler.onHeaders!(status, rawHead(raw), this.resume, '');
      return true;
    });
  };

  private readonly onData = (chunk: Buffer): void => {
    if (this.over()) return;
    this.deadline.renew('body');
    this.hand(() => this.handler.onData!(chunk));
  };

  private readonly onTrailers = (_headers: IncomingHttpHeaders, _flags: number, raw: string[]): void => {
    this.trailers = flatTrailers(raw);
  };

  /** Runs a handler callback: false pauses the stream, a throw fails the call. */
  private hand(callback: () => boolean): void {
    let more: boolean;
    try {
      more = callback();
    } catch (err) {
      return this.failed(err as Error);
    }
    if (more === false) this.pause();
  }

  private pause(): void {
    if (this.over()) return;
    this.paused = true;
    this.stream.pause();
  }
}
