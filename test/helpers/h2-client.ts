import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type SecureClientSessionOptions } from 'node:http2';
import type { TestContext } from 'node:test';

/**
 * node:http2 client calls for tests: a session that is open (or failed) before it is
 * used, and one request read whole. Every session a test opens is destroyed after it.
 */

export interface H2Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface H2RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** The stream is closed and the call rejects after this long (default 10 s). */
  timeoutMs?: number;
}

/** Opens a session to `authority` (`https://…` over TLS with ALPN, `http://…` with prior knowledge); resolves once connected. */
export function openSession(t: Pick<TestContext, 'after'>, authority: string, options: SecureClientSessionOptions = {}): Promise<ClientHttp2Session> {
  const session = connect(authority, options);
  t.after(() => session.destroy());
  // A session's later errors reach the streams that fail; unhandled they would kill the test process.
  session.on('error', () => {});
  return new Promise((resolve, reject) => {
    const failed = (err: Error): void => reject(err);
    session.once('error', failed);
    session.once('connect', () => {
      session.off('error', failed);
      resolve(session);
    });
  });
}

/** Sends one request on `session` and reads the whole answer. */
export function h2Request(session: ClientHttp2Session, path: string, o: H2RequestOptions = {}): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    let stream: ClientHttp2Stream;
    try {
      stream = session.request({ ':method': o.method ?? 'GET', ':path': path, ...o.headers }, { endStream: o.body === undefined });
    } catch (err) {
      return reject(err as Error);
    }
    const timer = setTimeout(() => {
      stream.close();
      reject(new Error(`h2 ${path}: no complete answer within ${o.timeoutMs ?? 10_000} ms`));
    }, o.timeoutMs ?? 10_000);
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (headers = h));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', () => {}); // told by 'close', with the stream's code
    // node's client also ends a stream the server reset: only a close with NO_ERROR after the end is a whole answer.
    stream.on('close', () => {
      clearTimeout(timer);
      if (stream.readableEnded && stream.rstCode === constants.NGHTTP2_NO_ERROR) resolve({ status: Number(headers[':status']), headers, body: Buffer.concat(chunks) });
      else reject(new Error(`h2 ${path}: stream closed with code ${stream.rstCode} after ${Buffer.concat(chunks).length} bytes`));
    });
    if (o.body !== undefined) stream.end(o.body);
  });
}

/** The p-th percentile (0–100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Sequential requests on `session` for `durationMs`, or until `until()` says so; each one's time in ms. Any answer but 200 rejects. */
export async function latencies(session: ClientHttp2Session, path: string, durationMs: number, until: () => boolean = () => false): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + durationMs;
  while (performance.now() < end && !until()) {
    const t0 = performance.now();
    const r = await h2Request(session, path);
    if (r.status !== 200) throw new Error(`${path}: status ${r.status}`);
    out.push(performance.now() - t0);
  }
  return out;
}
