import { randomBytes } from 'node:crypto';

/** A fresh 16-hex-digit trace id, generated server-side; client-supplied ids are never trusted. */
export function newTraceId(): string {
  return randomBytes(8).toString('hex');
}

/**
 * Cheap per-process trace ids for the data plane: a random prefix once per process,
 * then a counter. The worker slot leads so a log line names the worker that wrote it.
 */
export function traceIdFactory(slot: number): () => string {
  const prefix = `w${slot}-${randomBytes(4).toString('hex')}`;
  let n = 0;
  return () => `${prefix}-${(n++).toString(36)}`;
}

/** An incoming request id worth keeping: short, and nothing a log line or a header could be broken with. */
export const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
