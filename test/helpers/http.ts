import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { Json } from './json.js';

export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: Json;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** A string or Buffer is sent as is; any other value as JSON (with content-type). */
  body?: unknown;
  timeoutMs?: number;
  /** Local source address (Linux loopback accepts the whole 127/8: another socket peer). */
  localAddress?: string;
}

/**
 * One HTTP request on a fresh TCP connection (agent:false, Connection: close), so that
 * successive calls can land on different SO_REUSEPORT workers. Resolves with the status,
 * headers, raw text and parsed JSON body whatever the status.
 */
export function request(url: string, opts: RequestOptions = {}): Promise<HttpResult> {
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
    const req = httpRequest(url, { method: opts.method ?? 'GET', headers, agent: false, localAddress: opts.localAddress }, (res) => {
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
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${opts.method ?? 'GET'} ${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Asserts nothing itself: returns a description of why `r` is not an error envelope, or null when it is one. */
export function envelopeProblem(r: HttpResult): string | null {
  const b = r.json;
  if (!String(r.headers['content-type'] ?? '').startsWith('application/json')) return `content-type is ${r.headers['content-type']}`;
  if (!b || typeof b !== 'object' || Array.isArray(b)) return `body is not a JSON object: ${r.text.slice(0, 200)}`;
  if (typeof b.code !== 'string' || !b.code) return `no code: ${r.text.slice(0, 200)}`;
  if (typeof b.message !== 'string' || !b.message) return `no message: ${r.text.slice(0, 200)}`;
  if (typeof b.traceId !== 'string' || !b.traceId) return `no traceId: ${r.text.slice(0, 200)}`;
  return null;
}
