import { Readable } from 'node:stream';
import type { ClientHttp2Stream } from 'node:http2';
import { errors } from 'undici';

/** What the body's sender tells the request it belongs to. */
export interface BodyEvents {
  /** Bytes went onto the stream (they renew the headers deadline, as undici's writes do). */
  wrote(): void;
  /** The whole body is on the stream, END_STREAM after it. */
  ended(): void;
  /** The body failed (the client's upload broke a limit, or went away): the request fails with `err`. */
  failed(err: Error): void;
}

type Body = Buffer | Uint8Array | string | Readable | AsyncIterable<Uint8Array> | null | undefined;

/** A body to stream, or null for one sent whole. */
export function streamedBody(body: unknown): Readable | null {
  if (body === null || body === undefined || typeof body === 'string' || body instanceof Uint8Array) return null;
  if (body instanceof Readable) return body;
  if (typeof (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === 'function') return Readable.from(body as AsyncIterable<Uint8Array>, { objectMode: false });
  return null;
}

/**
 * Sends a request body on its stream with backpressure: a streamed body is read while the
 * stream takes it (paused when the stream's buffer is full, that is when the upstream's
 * flow-control window is spent; resumed at 'drain'), independently of the response, which
 * is delivered as it comes meanwhile (full duplex). A whole body goes in one write.
 * Returns `stop`, which detaches from the body and, when it has not ended, destroys it
 * (nobody will read the rest).
 */
export function sendBody(stream: ClientHttp2Stream, body: Body, source: Readable | null, on: BodyEvents): () => void {
  if (source === null) {
    if (body !== null && body !== undefined) {
      stream.end(body as Buffer | Uint8Array | string);
      on.wrote();
    }
    on.ended();
    return () => {};
  }
  let ended = false;
  let waiting = false;
  const resume = () => {
    waiting = false;
    source.resume();
  };
  const onData = (chunk: Buffer) => {
    on.wrote();
    if (!stream.write(chunk) && !waiting) {
      waiting = true;
      source.pause();
      stream.once('drain', resume);
    }
  };
  const onEnd = () => {
    ended = true;
    stream.end();
    on.ended();
  };
  const onError = (err: Error) => on.failed(err);
  // Destroyed without an error (the request's owner dropped it): the request cannot complete.
  const onClose = () => {
    if (!ended) on.failed(new errors.RequestAbortedError('the request body closed before its end'));
  };
  source.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  if (source.destroyed) queueMicrotask(onClose);
  else source.resume();
  return () => {
    source.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    stream.off('drain', resume);
    if (!ended && !source.destroyed) source.destroy();
  };
}
