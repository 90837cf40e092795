import { Readable } from 'node:stream';
import type { HttpRequest, HttpResponse } from './uws.js';
import type { StepRequest } from '../steps/step.js';

/**
 * The uWS rules, in one place. uWS hands out a request object that is valid only
 * during the synchronous callback and a response that dies on abort; everything
 * else in the worker talks to an Exchange and never to uWS directly:
 *  - the request is copied synchronously (method, url, query, headers, peer);
 *  - onAborted is registered before anything can await;
 *  - every write is corked (writes after an await must be);
 *  - response bodies go through tryEnd/write + onWritable (backpressure);
 *  - request bodies go through onData + pause/resume (backpressure);
 *  - nothing is written after an abort or after the end;
 *  - no exception escapes into uWS (DataServer wraps each handler).
 */
export class Exchange implements StepRequest {
  readonly method: string;
  readonly url: string;
  readonly query: string;
  /** Header names are lower case (uWS delivers them so). */
  readonly headers: [string, string][] = [];
  readonly remoteAddress: string;
  /** The normalised path, set by the route table. */
  path = '';
  aborted = false;
  done = false;
  private headSent = false;
  private bodyOpen = false;
  private abortHooks: (() => void)[] | null = null;

  constructor(
    readonly res: HttpResponse,
    req: HttpRequest,
    /** Worker-wide: a draining worker asks clients to close their connection. */
    private readonly closing: () => boolean,
    private readonly onFinish: () => void,
  ) {
    this.method = req.getCaseSensitiveMethod();
    this.url = req.getUrl();
    this.query = req.getQuery() ?? '';
    req.forEach((k, v) => {
      this.headers.push([k, v]);
    });
    this.remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString();
    res.onAborted(() => {
      this.aborted = true;
      this.finish();
      if (this.abortHooks) for (const h of this.abortHooks) h();
    });
  }

  header(name: string): string | undefined {
    for (const [k, v] of this.headers) if (k === name) return v;
    return undefined;
  }

  get hasBody(): boolean {
    const cl = this.header('content-length');
    return (cl !== undefined && cl !== '0') || this.header('transfer-encoding') !== undefined;
  }

  onAbort(hook: () => void): void {
    (this.abortHooks ??= []).push(hook);
  }

  /**
   * The request body as a stream. Must be called synchronously in the request
   * callback (uWS drops body data that has no onData handler). Backpressure: when the
   * stream's buffer is full the socket is paused until the consumer reads.
   */
  bodyStream(highWaterMark = 64 * 1024): Readable {
    this.bodyOpen = true;
    let paused = false;
    const stream = new Readable({
      highWaterMark,
      read: () => {
        if (paused && !this.aborted && !this.done) {
          paused = false;
          this.res.resume();
        }
      },
    });
    this.res.onData((ab, last) => {
      // The ArrayBuffer is only valid during this callback: copy it.
      if (!stream.push(Buffer.from(ab.slice(0))) && !last) {
        paused = true;
        this.res.pause();
      }
      if (last) {
        this.bodyOpen = false;
        stream.push(null);
      }
    });
    this.onAbort(() => stream.destroy(new Error('client aborted')));
    return stream;
  }

  /** A complete response in one corked write. Ignored once aborted or done. */
  send(status: number, body: string, headers?: Record<string, string>): void {
    if (this.aborted || this.done) return;
    this.res.cork(() => {
      this.res.writeStatus(statusLine(status));
      if (headers) for (const k in headers) this.res.writeHeader(k, headers[k]!);
      // A body we did not read to the end makes the connection unusable: close it.
      this.res.end(body, this.closing() || this.bodyOpen);
    });
    this.finish();
  }

  sendJson(status: number, value: unknown, headers?: Record<string, string>): void {
    this.send(status, JSON.stringify(value), { 'content-type': 'application/json', ...headers });
  }

  get headersSent(): boolean {
    return this.headSent;
  }

  /** Status and headers of a streamed response; the body follows through write/end. */
  writeHead(status: number, statusText: string | undefined, headers: [string, string][]): void {
    if (this.aborted || this.done) return;
    this.headSent = true;
    this.res.cork(() => {
      this.res.writeStatus(statusText ? `${status} ${statusText}` : statusLine(status));
      for (const [k, v] of headers) this.res.writeHeader(k, v);
    });
  }

  /**
   * Writes a body chunk. `total` is the body length when known (the response is then
   * sent with Content-Length and ends when `total` bytes are written), null for a
   * chunked body. Returns false under backpressure: `onDrain` runs once the client
   * took everything, and the caller must stop producing until then.
   */
  write(chunk: Buffer, total: number | null, onDrain: () => void): boolean {
    if (this.aborted || this.done) return true;
    const res = this.res;
    let ok = true;
    res.cork(() => {
      if (total === null) {
        ok = res.write(chunk);
        if (!ok) res.onWritable(() => (onDrain(), true));
        return;
      }
      const start = res.getWriteOffset();
      const [sent, finished] = res.tryEnd(chunk, total);
      if (finished) return this.finish();
      if (sent) return;
      ok = false;
      res.onWritable((offset) => {
        const [retried, done] = res.tryEnd(chunk.subarray(offset - start), total);
        if (done) this.finish();
        if (retried || done) onDrain();
        return retried;
      });
    });
    return ok;
  }

  /** Ends a streamed response (no-op if tryEnd already completed it). */
  end(): void {
    if (this.aborted || this.done) return;
    this.res.cork(() => this.res.end(undefined, this.closing()));
    this.finish();
  }

  /** Ends a response that has no body (HEAD, 204, 304), reporting `contentLength` if known. */
  endWithoutBody(contentLength: number | undefined): void {
    if (this.aborted || this.done) return;
    this.res.cork(() => {
      if (contentLength === undefined) this.res.endWithoutBody(0, this.closing());
      else this.res.endWithoutBody(contentLength, this.closing());
    });
    this.finish();
  }

  /** Cuts the connection: the only honest end for a response that failed after its head was sent. */
  close(): void {
    if (this.aborted || this.done) return;
    this.finish();
    this.res.close();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.onFinish();
  }
}

const REASONS: Record<number, string> = {
  200: 'OK', 201: 'Created', 204: 'No Content', 301: 'Moved Permanently', 302: 'Found', 303: 'See Other',
  304: 'Not Modified', 307: 'Temporary Redirect', 308: 'Permanent Redirect', 400: 'Bad Request', 401: 'Unauthorized',
  403: 'Forbidden', 404: 'Not Found', 413: 'Content Too Large', 429: 'Too Many Requests', 500: 'Internal Server Error',
  502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};
const lines = new Map<number, string>();

/** "503 Service Unavailable", built once per status. */
export function statusLine(status: number): string {
  let l = lines.get(status);
  if (l === undefined) {
    l = `${status} ${REASONS[status] ?? 'Status'}`;
    lines.set(status, l);
  }
  return l;
}
