import type { ClientHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import type { Dispatcher } from 'undici';
import { flatTrailers, rawHead } from './h2-request-head.js';
import type { StreamDeadline } from './stream-deadline.js';

/**
 * The answer side of one HTTP/2 call, as undici's handler callbacks: the head (onHeaders
 * with the raw fields, 1xx heads too as undici passes them), the data (onData), each able
 * to pause the stream by returning false: a paused stream is not read, so its
 * flow-control window is not renewed and the upstream stops, until `resume`. Trailers are
 * kept for the call's onComplete. Nothing reaches the handler once the call is `over`.
 */
export class H2Answer {
  paused = false;
  trailers: string[] | null = null;

  constructor(
    private readonly stream: ClientHttp2Stream,
    private readonly handler: Dispatcher.DispatchHandler,
    private readonly deadline: StreamDeadline,
    private readonly over: () => boolean,
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
    const more = this.handler.onHeaders!(Number(headers[':status']), rawHead(raw), this.resume, '');
    if (more === false) this.pause();
  };

  /** A 1xx head (103): handed on as undici does; the head's deadline still runs. */
  private readonly onInformational = (headers: IncomingHttpHeaders, _flags: number, raw: string[]): void => {
    const status = Number(headers[':status']);
    if (this.over() || !(status > 100 && status < 200)) return;
    this.handler.onHeaders!(status, rawHead(raw), this.resume, '');
  };

  private readonly onData = (chunk: Buffer): void => {
    if (this.over()) return;
    this.deadline.renew('body');
    if (this.handler.onData!(chunk) === false) this.pause();
  };

  private readonly onTrailers = (_headers: IncomingHttpHeaders, _flags: number, raw: string[]): void => {
    this.trailers = flatTrailers(raw);
  };

  private pause(): void {
    if (this.over()) return;
    this.paused = true;
    this.stream.pause();
  }
}
