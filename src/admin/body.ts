import type { IncomingMessage } from 'node:http';
import { SvcError } from '../shared/errors.js';

export const MAX_ADMIN_BODY = 1024 * 1024;
/** How long an oversized upload is read and dropped before the 413 goes out. */
const DRAIN_MS = 2_000;

/** Reads a JSON request body (at most MAX_ADMIN_BODY bytes). Empty body: undefined. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_ADMIN_BODY) {
    await drain(req);
    throw tooLarge();
  }
  const raw = await collect(req);
  if (raw === null) throw tooLarge();
  if (raw.length === 0) return undefined;
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new SvcError('Svc.Request.MediaType');
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new SvcError('Svc.Request.BadJson', `The request body is not valid JSON: ${(err as Error).message}`);
  }
  if (depthOver(value, MAX_JSON_DEPTH)) throw new SvcError('Svc.Request.BadJson', `The request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

/** No document needs more; recursive code further on (schemas, the compiler) must never meet deeper ones. */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests deeper than `max` arrays/objects (iterative: any depth is safe to check). */
function depthOver(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
  }
  return false;
}

const tooLarge = () => new SvcError('Svc.Request.TooLarge', `The request body exceeds ${MAX_ADMIN_BODY} bytes`);

/**
 * The body, or null once it passes the limit. Past the limit the rest is read and
 * dropped (for DRAIN_MS at most): destroying the request would reset the connection
 * and a client still uploading would never see the 413.
 */
function collect(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const onData = (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > MAX_ADMIN_BODY) {
        over = true;
        chunks.length = 0;
        req.off('end', onEnd);
        void drain(req).then(() => resolve(null));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    // A client that leaves mid-upload, or sends a broken chunked body: its fault, not a
    // 500 (Svc.Internal means a bug, and is logged as one).
    const onError = (err: Error) => reject(new SvcError('Svc.Request.Malformed', `The request body could not be read: ${err.message}`));
    req.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

function drain(req: IncomingMessage): Promise<void> {
  if (req.complete) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, DRAIN_MS);
    req.once('end', done).once('close', done).once('error', done);
    req.resume();
  });
}
