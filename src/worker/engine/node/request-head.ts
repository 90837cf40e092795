import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { RequestHead } from '../contract.js';

/**
 * A node request's head as the contract reads it. Built over `rawHeaders` only (node's
 * `headers` object, which joins repeats, is never made); the lower-cased lines are made
 * once, on the first header read.
 */
export class NodeRequestHead implements RequestHead {
  private readonly path: string;
  private readonly query: string | undefined;
  /** name, value, name, value… names lower case, h2 pseudo-headers left out. */
  private lines: string[] | null = null;

  constructor(
    private readonly req: IncomingMessage | Http2ServerRequest,
    private readonly h2: boolean,
  ) {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    this.path = q < 0 ? url : url.slice(0, q);
    this.query = q < 0 ? undefined : url.slice(q + 1);
  }

  getCaseSensitiveMethod(): string {
    return this.req.method ?? '';
  }

  getUrl(): string {
    return this.path;
  }

  getQuery(): string | undefined {
    return this.query;
  }

  getHeader(lowerCaseName: string): string {
    const l = this.lines ?? this.build();
    for (let i = 0; i < l.length; i += 2) if (l[i] === lowerCaseName) return l[i + 1]!;
    return '';
  }

  forEach(cb: (lowerCaseName: string, value: string) => void): void {
    const l = this.lines ?? this.build();
    for (let i = 0; i < l.length; i += 2) cb(l[i]!, l[i + 1]!);
  }

  private build(): string[] {
    const raw = this.req.rawHeaders;
    const out: string[] = [];
    if (!this.h2) {
      for (let i = 0; i < raw.length; i += 2) out.push(raw[i]!.toLowerCase(), raw[i + 1]!);
      return (this.lines = out);
    }
    // h2: names come lower case; cookie crumbs (RFC 9113 §8.2.3) become one line where the first was.
    let authority = '';
    let host: string | null = null;
    let cookieAt = -1;
    let length = false;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!;
      if (name.charCodeAt(0) === 58 /* ':' */) {
        if (name === ':authority') authority = raw[i + 1]!;
        continue;
      }
      if (name === 'host') host = raw[i + 1]!;
      else if (name === 'content-length') length = true;
      if (name === 'cookie') {
        if (cookieAt >= 0) {
          out[cookieAt + 1] += '; ' + raw[i + 1]!;
          continue;
        }
        cookieAt = out.length;
      }
      out.push(name, raw[i + 1]!);
    }
    if (host === null && authority !== '') out.unshift('host', authority);
    // A Host beside a different :authority is malformed (RFC 9113 §8.3.1): said as two Host lines, the data server refuses it 400.
    else if (host !== null && authority !== '' && host !== authority) out.unshift('host', authority);
    // h2 has no Transfer-Encoding: a body without Content-Length is told by HEADERS without END_STREAM. Said as chunked, the owner reads and forwards it.
    if (!length && !(this.req as Http2ServerRequest).stream.endAfterHeaders) out.push('transfer-encoding', 'chunked');
    return (this.lines = out);
  }
}
