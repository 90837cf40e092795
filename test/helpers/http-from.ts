import { request as httpRequest } from 'node:http';
import type { HttpResult, RequestOptions } from './http.js';

/**
 * request() (see http.ts) from a chosen local source address: Linux loopback accepts the
 * whole 127/8, so `localAddress: '127.0.0.2'` makes the server see a different socket
 * peer than the default 127.0.0.1. One fresh TCP connection per call (agent:false).
 */
export function requestFrom(localAddress: string, url: string, opts: RequestOptions = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...opts.headers };
  let payload: Buffer | undefined;
  if (opts.body !== undefined) {
    if (typeof opts.body === 'string' || Buffer.isBuffer(opts.body)) payload = Buffer.from(opts.body as string);
    else {
      payload = Buffer.from(JSON.stringify(opts.body));
      headers['content-type'] ??= 'application/json';
    }
    headers['content-length'] = String(payload.length);
  }
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  const timeoutMs = opts.timeoutMs ?? 5_000;
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: opts.method ?? 'GET', headers, agent: false, localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${opts.method ?? 'GET'} ${url} from ${localAddress}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}
