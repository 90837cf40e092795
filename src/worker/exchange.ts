import type { HttpRequest, HttpResponse } from './uws.js';

/**
 * The uWS rules, in one place. uWS hands out a request object that is valid only
 * during the synchronous callback and a response that dies on abort; everything
 * else in the worker talks to an Exchange and never to uWS directly:
 *  - the request is copied synchronously (method, url, query, headers, peer);
 *  - onAborted is registered before anything can await;
 *  - writes after an await are corked;
 *  - nothing is written after an abort or after the end;
 *  - no exception escapes into uWS (the server wraps each handler).
 */
export class Exchange {
  readonly method: string;
  readonly url: string;
  readonly query: string;
  /** Header names are lower case (uWS delivers them so). */
  readonly headers: [string, string][] = [];
  readonly remoteAddress: string;
  aborted = false;
  done = false;
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

  onAbort(hook: () => void): void {
    (this.abortHooks ??= []).push(hook);
  }

  /** A complete response in one corked write. Safe to call at any time; ignored once aborted or done. */
  send(status: number, body: string, headers?: Record<string, string>): void {
    if (this.aborted || this.done) return;
    this.res.cork(() => {
      this.res.writeStatus(statusLine(status));
      if (headers) for (const k in headers) this.res.writeHeader(k, headers[k]!);
      this.res.end(body, this.closing());
    });
    this.finish();
  }

  sendJson(status: number, value: unknown, headers?: Record<string, string>): void {
    this.send(status, JSON.stringify(value), { 'content-type': 'application/json', ...headers });
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
