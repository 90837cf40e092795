import { constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { errors, type Dispatcher } from 'undici';
import type { Upstream } from '../../contracts/upstream.js';
import type { ConnectionAware } from '../target-pool.js';
import { flatTrailers, h2RequestHead, rawHead } from './h2-request-head.js';
import { sendBody, streamedBody } from './h2-request-body.js';
import { requestRefusal, streamFailure } from './h2-errors.js';

const { NGHTTP2_CANCEL, NGHTTP2_NO_ERROR } = constants;

/** undici's own deadlines, for a request that sets none. */
const DEFAULT_TIMEOUT_MS = 300_000;

type Handler = Dispatcher.DispatchHandler & Partial<ConnectionAware> & { onRequestSent?(): void };

/** Where a call's stream goes: the target's scheme and authority, and the pool a re-send goes to. */
export interface CallPlace {
  scheme: 'http' | 'https';
  authority: string;
  conn: Upstream;
}

/**
 * One request on one HTTP/2 stream, speaking undici's handler protocol as its Client does:
 * onConnection (ConnectionAware) and onConnect(abort) before anything is sent; the body
 * streamed while the answer streams (full duplex); onHeaders, then onData until one returns
 * false (the stream is paused, which stops its flow-control window, until `resume`);
 * onComplete(trailers) or onError, once. undici's deadlines apply as it applies them: the
 * head's from the request's last byte written (not while the body still goes out and the
 * upstream takes it), the body's between two chunks (not while paused). abort(err), a
 * deadline or a failure resets the stream with RST_STREAM CANCEL.
 */
export class H2Call {
  private stream: ClientHttp2Stream | null = null;
  /** onComplete or onError was called: nothing more reaches the handler. */
  private over = false;
  private paused = false;
  private timer: NodeJS.Timeout | null = null;
  private waitingFor: 'headers' | 'body' = 'headers';
  private bodySent = false;
  private stopBody: () => void = () => {};
  private trailers: string[] | null = null;

  constructor(
    private readonly opts: Dispatcher.DispatchOptions,
    private readonly handler: Handler,
    /** The call is over (its slot on the session is free), called before the handler hears of it. */
    private readonly finished: (call: H2Call) => void,
  ) {}

  readonly abort = (err?: Error): void => this.fail(err ?? new errors.RequestAbortedError('request aborted'));

  /** Nothing was sent (the session could not be had, or the request was refused): the body is untouched for another attempt. */
  refuse(err: Error): void {
    if (this.over) return;
    this.over = true;
    this.finished(this);
    this.handler.onError!(err);
  }

  /** Opens the stream on `session`; `reused`: the session carried streams before this one. */
  start(session: ClientHttp2Session, place: CallPlace, reused: boolean): void {
    const h = this.handler;
    h.onConnection?.(place.conn, reused);
    let head: OutgoingHttpHeaders;
    try {
      head = h2RequestHead(this.opts, place.scheme, place.authority);
    } catch (err) {
      return this.refuse(err as Error); // undici refuses such a request before it takes a connection
    }
    const body = this.opts.body as Buffer | string | null | undefined;
    const source = streamedBody(body);
    const bodyless = source === null && (body === null || body === undefined || body.length === 0);
    h.onConnect!(this.abort);
    if (this.over) return; // aborted from onConnect: the client had left
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(head, { endStream: bodyless });
    } catch (err) {
      return this.fail(requestRefusal(err as Error));
    }
    this.stream = stream;
    stream.on('response', this.onResponse).on('headers', this.onInformational).on('data', this.onData).on('trailers', this.onTrailers);
    stream.once('end', this.onEnd).on('error', this.onStreamError).once('close', this.onClose);
    this.deadline('headers');
    this.stopBody = sendBody(stream, bodyless ? null : body, source, { wrote: this.wrote, ended: this.bodyEnded, failed: this.fail });
    if (this.over) this.stopBody();
  }

  private readonly onResponse = (headers: IncomingHttpHeaders, _flags: number, raw: string[]): void => {
    if (this.over) return;
    this.deadline('body');
    const more = this.handler.onHeaders!(Number(headers[':status']), rawHead(raw), this.resume, '');
    if (more === false && !this.over) this.pause();
  };

  /** A 1xx head (103): handed on as undici does; the head's deadline still runs. */
  private readonly onInformational = (headers: IncomingHttpHeaders, _flags: number, raw: string[]): void => {
    const status = Number(headers[':status']);
    if (this.over || !(status > 100 && status < 200)) return;
    this.handler.onHeaders!(status, rawHead(raw), this.resume, '');
  };

  private readonly onData = (chunk: Buffer): void => {
    if (this.over) return;
    this.timer?.refresh();
    if (this.handler.onData!(chunk) === false && !this.over) this.pause();
  };

  private readonly onTrailers = (_headers: IncomingHttpHeaders, _flags: number, raw: string[]): void => {
    this.trailers = flatTrailers(raw);
  };

  private readonly onEnd = (): void => {
    const s = this.stream!;
    // A stream destroyed under the answer (its session gone) ends too, without END_STREAM: 'close' says how.
    if (this.over || s.destroyed) return;
    this.settle();
    // The answer is whole: a request body still going out is cut short without error (RFC 9113 §8.1).
    if (!s.writableEnded) s.close(NGHTTP2_NO_ERROR);
    this.finished(this);
    this.handler.onComplete!(this.trailers);
  };

  private readonly onStreamError = (err: Error): void => this.fail(streamFailure(err, this.stream?.rstCode));

  private readonly onClose = (): void => {
    if (!this.over) this.fail(streamFailure(null, this.stream!.rstCode));
  };

  private readonly fail = (err: Error): void => {
    if (this.over) return;
    this.settle();
    const s = this.stream;
    if (s !== null && !s.closed) s.close(NGHTTP2_CANCEL);
    this.finished(this);
    this.handler.onError!(err);
  };

  private settle(): void {
    this.over = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.stopBody();
  }

  private pause(): void {
    this.paused = true;
    this.stream!.pause();
  }

  private readonly resume = (): void => {
    if (this.over || !this.paused) return;
    this.paused = false;
    if (this.waitingFor === 'body') this.timer?.refresh();
    this.stream!.resume();
  };

  /** Body bytes went out: the head's deadline starts again (undici refreshes it on every write). */
  private readonly wrote = (): void => {
    if (this.waitingFor === 'headers') this.timer?.refresh();
  };

  private readonly bodyEnded = (): void => {
    this.bodySent = true;
    this.wrote();
    this.handler.onRequestSent?.();
  };

  private deadline(kind: 'headers' | 'body'): void {
    this.waitingFor = kind;
    const ms = (kind === 'headers' ? this.opts.headersTimeout : this.opts.bodyTimeout) ?? DEFAULT_TIMEOUT_MS;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = ms > 0 ? setTimeout(this.expired, ms) : null;
  }

  private readonly expired = (): void => {
    if (this.over) return;
    if (this.waitingFor === 'headers') {
      // The uploader is slow, not the upstream: the next write or the body's end starts the deadline again.
      if (!this.bodySent && !this.stream!.writableNeedDrain) return;
      return this.fail(new errors.HeadersTimeoutError('Headers Timeout Error'));
    }
    // Paused by the handler: resume() starts it again.
    if (!this.paused) this.fail(new errors.BodyTimeoutError('Body Timeout Error'));
  };
}
