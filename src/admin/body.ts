import type { IncomingMessage } from 'node:http';
import { SvcError } from '../shared/errors.js';

export const MAX_ADMIN_BODY = 1024 * 1024;

/** Reads a JSON request body (at most MAX_ADMIN_BODY bytes). Empty body: undefined. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_ADMIN_BODY) throw new SvcError('Svc.Request.TooLarge', `The request body exceeds ${MAX_ADMIN_BODY} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_ADMIN_BODY) throw new SvcError('Svc.Request.TooLarge', `The request body exceeds ${MAX_ADMIN_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new SvcError('Svc.Request.MediaType');
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new SvcError('Svc.Request.BadJson', `The request body is not valid JSON: ${(err as Error).message}`);
  }
}
