import { Readable } from 'node:stream';
import type { ErrorCode } from '../shared/errors.js';
import type { RequestOwner } from './request-owner.js';
import { proxy } from './proxy.js';
import type { ClusterPools } from './upstream-pools.js';
import { RequestBodyRefused } from './request-body.js';

/** The body did not arrive whole within the deadline. */
export class BodyDeadline extends Error {
  constructor(ms: number) {
    super(`the request body did not arrive within ${ms} ms`);
  }
}

/**
 * Reads a request body ahead of the upstream call, up to `max` bytes within `deadlineMs`.
 * `then` gets the whole body as one Buffer when it ends within `max`; else the stream
 * itself, the bytes read put back in front, to be sent on as the rest arrives; or the
 * Error that ended the read (the client left, the deadline passed, a body cap).
 * Memory: at most `max` plus one chunk per request.
 */
export function readAhead(body: Readable, max: number, deadlineMs: number, then: (body: Buffer | Readable | Error) => void): void {
  if (body.destroyed) return then(new Error('the request body is gone'));
  const chunks: Buffer[] = [];
  let size = 0;
  const stop = () => {
    clearTimeout(timer);
    body.off('data', onData);
    body.off('end', onEnd);
    body.off('error', onError);
    body.off('close', onClose);
  };
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
    if (size <= max) return;
    // Larger than worth holding: the upstream gets what was read, then the rest as it comes.
    body.pause();
    stop();
    body.unshift(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    then(body);
  };
  const onEnd = () => {
    stop();
    then(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  };
  const onError = (err: Error) => {
    stop();
    then(err);
  };
  const onClose = () => onError(new Error('the request body ended before its end'));
  const timer = setTimeout(() => {
    stop();
    body.destroy();
    then(new BodyDeadline(deadlineMs));
  }, deadlineMs);
  body.on('data', onData);
  body.once('end', onEnd);
  body.once('error', onError);
  body.once('close', onClose);
  body.resume(); // a 'data' listener alone does not restart a stream an earlier reader paused
}

/**
 * The proxy stage behind request buffering: a body up to `max` bytes is read whole
 * before a connection is taken, so a slow uploader holds none; it must arrive within the
 * cluster's bodyMs (else 408). `max` 0, a body already whole (a Buffer) or none: straight on.
 */
export function proxyBuffered(life: RequestOwner, pools: ClusterPools, body: Buffer | Readable | null, max: number): void {
  if (max === 0 || !(body instanceof Readable) || life.aborted) return proxy(life, pools, body);
  readAhead(body, max, pools.spec.bodyMs, (b) => {
    if (!(b instanceof Error)) return proxy(life, pools, b);
    const code: ErrorCode = life.flow?.bodyTooLarge
      ? 'Svc.Data.TooLarge'
      : b instanceof RequestBodyRefused
        ? b.code
        : b instanceof BodyDeadline
          ? 'Svc.Data.RequestTimeout'
          : 'Svc.Internal';
    if (code !== 'Svc.Internal' || !life.answerable) return life.replyError(code);
    // Neither the client leaving, nor the deadline, nor a body cap: not a failure the body stream should have.
    const traceId = life.traceId();
    life.env.log.warn({ err: b.message, traceId, path: life.path }, 'the request body read failed');
    life.replyError(code, traceId);
  });
}
