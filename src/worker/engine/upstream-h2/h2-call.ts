import { constants, type ClientHttp2Session, type ClientHttp2Stream, type OutgoingHttpHeaders } from 'node:http2';
import { errors, type Dispatcher } from 'undici';
import type { Upstream } from '../../../contracts/upstream.js';
import type { ConnectionAware } from '../../target-pool.js';
import { h2RequestHead } from './h2-request-head.js';
import { H2Answer } from './h2-answer.js';
import { sendBody, streamedBody } from './h2-request-body.js';
import { requestRefusal, streamFailure } from './h2-errors.js';
import { StreamDeadline } from './stream-deadline.js';

const { NGHTTP2_CANCEL, NGHTTP2_NO_ERROR } = constants;

/**
 * request()'s options with node's own defaults for priority already in: node:http2 fills
 * in and validates the missing ones on a copy per stream (~4 µs a stream on Node 20,
 * measured in a loop of h2c requests against a local server: 55–60 against 51–53 µs).
 */
const WITH_BODY = Object.freeze({ endStream: false, weight: 16, parent: 0, exclusive: false, silent: false });
const BODYLESS = Object.freeze({ ...WITH_BODY, endStream: true });

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
 * streamed while the answer streams (full duplex; the answer's side: h2-answer.ts);
 * onComplete(trailers) or onError, once. undici's deadlines apply as it applies them: the
 * head's from the request's last byte written (not while the body still goes out and the
 * upstream takes it), the body's between two chunks (not while paused). abort(err), a
 * deadline or a failure resets the stream with RST_STREAM CANCEL.
 */
export class H2Call {
  private stream: ClientHttp2Stream | null = null;
  /** onComplete or onError was called: nothing more reaches the handler. */
  private over = false;
  private answer: H2Answer | null = null;
  private readonly deadline: StreamDeadline;
  private bodySent = false;
  private stopBody: () => void = () => {};

  constructor(
    private readonly opts: Dispatcher.DispatchOptions,
    private readonly handler: Handler,
    /** The call is over (its slot on the session is free), called before the handler hears of it. */
    private readonly finished: (call: H2Call) => void,
  ) {
    this.deadline = new StreamDeadline(opts, this.expired);
  }

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
      stream = session.request(head, bodyless ? BODYLESS : WITH_BODY);
    } catch (err) {
      return this.fail(requestRefusal(err as Error));
    }
    this.stream = stream;
    this.answer = new H2Answer(stream, h, this.deadline, () => this.over, this.fail);
    // `on`: each is emitted once (onEnd and onClose see `over`); once() would wrap and remove per stream.
    stream.on('end', this.onEnd).on('error', this.onStreamError).on('close', this.onClose);
    this.deadline.start('headers');
    this.stopBody = sendBody(stream, bodyless ? null : body, source, { wrote: this.wrote, ended: this.bodyEnded, failed: this.fail });
    if (this.over) this.stopBody();
  }

  private readonly onEnd = (): void => {
    const s = this.stream!;
    // A stream destroyed under the answer (its session gone) ends too, without END_STREAM: 'close' says how.
    if (this.over || s.destroyed) return;
    this.settle();
    // The answer is whole: a request body still going out is cut short without error (RFC 9113 §8.1).
    if (!s.writableEnded) s.close(NGHTTP2_NO_ERROR);
    this.finished(this);
    this.handler.onComplete!(this.answer!.trailers);
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
    this.deadline.clear();
    this.stopBody();
  }

  /** Body bytes went out: the head's deadline starts again (undici refreshes it on every write). */
  private readonly wrote = (): void => this.deadline.renew('headers');

  private readonly bodyEnded = (): void => {
    this.bodySent = true;
    this.wrote();
    this.handler.onRequestSent?.();
  };

  private readonly expired = (phase: 'headers' | 'body'): void => {
    if (this.over) return;
    if (phase === 'headers') {
      // The uploader is slow, not the upstream: the next write or the body's end renews the deadline.
      if (!this.bodySent && !this.stream!.writableNeedDrain) return;
      return this.fail(new errors.HeadersTimeoutError('Headers Timeout Error'));
    }
    // Paused by the handler: resume() starts it again.
    if (!this.answer!.paused) this.fail(new errors.BodyTimeoutError('Body Timeout Error'));
  };
}
