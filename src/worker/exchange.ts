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
 *  - a response head (status line and headers) goes out in one writeStatus call (headBlock);
 *  - response bodies go through tryEnd/write + onWritable (backpressure);
 *  - request bodies go through onData + pause/resume (backpressure);
 *  - nothing is written after an abort or after the end;
 *  - no exception escapes into uWS (DataServer wraps each handler).
 */
export class Exchange implements StepRequest {
  readonly method: string;
  readonly url: string;
  /** The raw query after '?', or null when the target has no '?' at all (a bare '?' is ''). */
  readonly query: string | null;
  /** Flat `name, value, name, value, …` as undici takes them; names lower case (uWS delivers them so). */
  readonly headers: string[] = [];
  /** The request announced a body (Content-Length other than 0, or Transfer-Encoding). */
  readonly hasBody: boolean;
  private peer: string | null = null;
  /** The normalised path routes were matched on (see normalize-path.ts). */
  readonly path: string;
  aborted = false;
  done = false;
  private headFlushed = false;
  /** Status line and headers waiting to go out with the first body bytes (one send, not two). */
  private pendingHead: { line: string; headers: [string, string][] } | null = null;
  private bodyOpen = false;
  private abortHooks: (() => void)[] | null = null;

  constructor(
    readonly res: HttpResponse,
    req: HttpRequest,
    method: string,
    url: string,
    path: string,
    /** Worker-wide: a draining worker asks clients to close their connection. */
    private readonly closing: () => boolean,
    private readonly onFinish: () => void,
  ) {
    this.method = method;
    this.url = url;
    this.path = path;
    this.query = req.getQuery() ?? null;
    const h = this.headers;
    let body = false;
    req.forEach((k, v) => {
      h.push(k, v);
      if ((k === 'content-length' && v !== '0') || k === 'transfer-encoding') body = true;
    });
    this.hasBody = body;
    res.onAborted(() => {
      this.aborted = true;
      this.finish();
      if (this.abortHooks) for (const h of this.abortHooks) h();
    });
  }

  /** The socket peer (never a client-supplied header). Read lazily: most routes never need it. */
  get remoteAddress(): string {
    if (this.peer === null) this.peer = this.aborted || this.done ? '' : formatAddress(this.res.getRemoteAddress());
    return this.peer;
  }

  header(name: string): string | undefined {
    const h = this.headers;
    for (let i = 0; i < h.length; i += 2) if (h[i] === name) return h[i + 1];
    return undefined;
  }

  /** Every value of a header that may repeat, joined as one list (RFC 9110 §5.3). */
  headerList(name: string): string | undefined {
    const h = this.headers;
    let out: string | undefined;
    for (let i = 0; i < h.length; i += 2) if (h[i] === name) out = out === undefined ? h[i + 1] : `${out}, ${h[i + 1]}`;
    return out;
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
  send(status: number, body: string | Buffer, headers?: Record<string, string>): void {
    this.sendHead(status, body, headers ? Object.entries(headers) : []);
  }

  /** Like send, with headers as a list (repeated names allowed). */
  sendHead(status: number, body: string | Buffer, headers: [string, string][]): void {
    if (this.aborted || this.done) return;
    this.pendingHead = null; // a held streamed head is replaced by this response
    this.res.cork(() => {
      this.res.writeStatus(headBlock(statusLine(status), headers));
      // A body we did not read to the end makes the connection unusable: close it.
      this.res.end(body, this.closing() || this.bodyOpen);
    });
    this.finish();
  }

  sendJson(status: number, value: unknown, headers?: Record<string, string>): void {
    this.send(status, JSON.stringify(value), { 'content-type': 'application/json', ...headers });
  }

  /** The head reached the socket: from here on only cutting the connection can signal a failure. */
  get headersSent(): boolean {
    return this.headFlushed;
  }

  /**
   * Status and headers of a streamed response; the body follows through write/end.
   * uWS terminates the head only with the first body write, so the head is held and
   * written in the same cork as that write: one send instead of two.
   */
  writeHead(status: number, statusText: string | undefined, headers: [string, string][]): void {
    if (this.aborted || this.done) return;
    // The upstream's usual reason phrase takes the cached line: no string built per response.
    this.pendingHead = { line: statusText && statusText !== REASONS[status] ? `${status} ${statusText}` : statusLine(status), headers };
  }

  /** Inside a cork: the held head, if any. */
  private flushHead(): void {
    const h = this.pendingHead;
    if (h === null) return;
    this.pendingHead = null;
    this.headFlushed = true;
    this.res.writeStatus(headBlock(h.line, h.headers));
  }

  /**
   * Writes a body chunk. `total` is the body length when known (the response is then
   * sent with Content-Length and ends when `total` bytes are written), null for a
   * chunked body. Returns false under backpressure: `onDrain` runs once the client
   * took everything, and the caller must stop producing until then.
   */
  write(chunk: Buffer, total: number | null, onDrain: () => void): boolean {
    if (this.aborted || this.done) return true;
    // In chunked mode a zero-length write is the terminating chunk: never pass one on.
    if (chunk.length === 0 && total !== 0) return true;
    const res = this.res;
    let ok = true;
    res.cork(() => {
      this.flushHead();
      if (total === null) {
        ok = res.write(chunk);
        // Resume the producer after uWS's writable callback, not inside it.
        if (!ok) res.onWritable(() => (setImmediate(onDrain), true));
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
    this.res.cork(() => {
      this.flushHead();
      this.res.end(undefined, this.closing());
    });
    this.finish();
  }

  /** Ends a response that has no body (HEAD, 204, 304), reporting `contentLength` if known. */
  endWithoutBody(contentLength: number | undefined): void {
    if (this.aborted || this.done) return;
    this.res.cork(() => {
      this.flushHead();
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

/** A response fixed at compile time (directResponse, redirect) or made on the spot (404, 503). */
export interface StaticReply {
  /** Status line and header lines as one block (see headBlock), joined once. */
  head: string;
  headers: [string, string][];
  body: string;
}

export function staticReply(status: number, body: string, headers: Record<string, string>): StaticReply {
  const list = Object.entries(headers);
  return { head: headBlock(statusLine(status), list), headers: list, body };
}

/**
 * The status line and the header lines as one string for a single writeStatus call.
 * uWS writes `HTTP/1.1 ${status}\r\n` and `${name}: ${value}\r\n` byte for byte, so the
 * wire is the same as one writeHeader per header; but uWS.js copies every string
 * argument of every call into native memory, and one call per head instead of one per
 * header was a measurable share of a proxied request's CPU (about 0.15 µs a header).
 * Safe because no value holds CR or LF: upstream heads come through llhttp, client
 * headers through uWS's parser, and configured values are checked by their schemas.
 */
export function headBlock(line: string, headers: readonly (readonly [string, string])[]): string {
  let s = line;
  for (let i = 0; i < headers.length; i++) s += '\r\n' + headers[i]![0] + ': ' + headers[i]![1];
  return s;
}

/**
 * Answers from inside the uWS request callback, where uWS has already corked the
 * socket: no Exchange, no header copy, no abort handler (nothing awaits).
 */
export function replyStatic(res: HttpResponse, r: StaticReply, close: boolean): void {
  res.writeStatus(r.head);
  res.end(r.body, close);
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

const v4Names = new Map<number, string>();

/** The first ten bytes of an IPv4-mapped IPv6 address are zero. */
function zeroPrefix(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return true;
}

/** uWS's binary peer address as text: IPv4 (also v4-mapped IPv6) from a small cache, else IPv6. */
export function formatAddress(ab: ArrayBuffer): string {
  const b = new Uint8Array(ab);
  let o = -1;
  if (b.length === 4) o = 0;
  else if (b.length === 16 && b[10] === 0xff && b[11] === 0xff && zeroPrefix(b)) o = 12;
  if (o >= 0) {
    const key = ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
    let name = v4Names.get(key);
    if (name === undefined) {
      name = `${b[o]}.${b[o + 1]}.${b[o + 2]}.${b[o + 3]}`;
      if (v4Names.size > 4096) v4Names.clear();
      v4Names.set(key, name);
    }
    return name;
  }
  const groups: string[] = [];
  for (let i = 0; i + 1 < b.length; i += 2) groups.push(((b[i]! << 8) | b[i + 1]!).toString(16));
  // compress the longest run of zero groups (RFC 5952)
  let best = -1, bestLen = 0;
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== '0') { i++; continue; }
    let j = i;
    while (j < groups.length && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) { best = i; bestLen = j - i; }
    i = j;
  }
  if (best === -1) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}
