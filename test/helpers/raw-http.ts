import { connect } from 'node:net';
import type { Json } from './json.js';

export interface RawResponse {
  status: number;
  /** Header names lower case, in arrival order (repeated names kept). */
  headerList: [string, string][];
  /** Header values by lower-case name, repeated names joined with ', '. */
  headers: Record<string, string>;
  body: Buffer;
  text: string;
  json: Json;
  /** The bytes as received, for diagnostics. */
  raw: string;
}

/**
 * Sends one HTTP/1.1 request exactly as written (request line, headers, body) on a fresh
 * TCP connection and reads the response until the server closes the connection or a
 * complete response has arrived. Nothing is normalised on the way out: use it for raw
 * paths (`/a/../b`) and for headers a client library would rewrite (Connection, TE, ...).
 * `head` is the request line plus header lines without the final blank line; `\r\n` is
 * added between lines. `localAddress` picks the source address (Linux loopback accepts
 * the whole 127/8: another socket peer than 127.0.0.1).
 */
export function rawRequest(port: number, head: string[], body: Buffer | string = '', timeoutMs = 5_000, localAddress?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port, localAddress });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (err?: Error, closed = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) return reject(err);
      const parsed = parse(Buffer.concat(chunks), closed);
      if (parsed) resolve(parsed);
      else reject(new Error(`incomplete response: ${Buffer.concat(chunks).toString('latin1').slice(0, 500)}`));
    };
    const timer = setTimeout(() => finish(new Error(`no complete response within ${timeoutMs} ms: ${Buffer.concat(chunks).toString('latin1').slice(0, 500)}`)), timeoutMs);
    sock.on('connect', () => {
      sock.write(head.join('\r\n') + '\r\n\r\n');
      if (body.length) sock.write(body);
    });
    sock.on('data', (c: Buffer) => {
      chunks.push(c);
      if (parse(Buffer.concat(chunks))) finish();
    });
    sock.on('end', () => finish(undefined, true));
    sock.on('error', (err) => finish(err));
  });
}

/** `closed`: the server has closed, so an answer without a length ends here (uWS's own 400s). */
function parse(buf: Buffer, closed = false): RawResponse | null {
  const sep = buf.indexOf('\r\n\r\n');
  if (sep === -1) return null;
  const headText = buf.subarray(0, sep).toString('latin1');
  const [statusLine, ...lines] = headText.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? NaN);
  const headerList: [string, string][] = lines.map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()];
  });
  const headers: Record<string, string> = {};
  for (const [k, v] of headerList) headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  const rest = buf.subarray(sep + 4);
  let body: Buffer;
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    let off = 0;
    for (;;) {
      const eol = rest.indexOf('\r\n', off);
      if (eol === -1) return null;
      const size = parseInt(rest.subarray(off, eol).toString('latin1'), 16);
      if (Number.isNaN(size)) return null;
      if (size === 0) {
        if (rest.indexOf('\r\n\r\n', eol) === -1 && rest.indexOf('\r\n', eol + 2) === -1) return null;
        break;
      }
      if (rest.length < eol + 2 + size + 2) return null;
      parts.push(rest.subarray(eol + 2, eol + 2 + size));
      off = eol + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    const n = Number(headers['content-length']);
    if (rest.length < n) return null;
    body = rest.subarray(0, n);
  } else if (status === 204 || status === 304 || (status >= 100 && status < 200)) {
    body = Buffer.alloc(0);
  } else if (closed) {
    body = rest;
  } else {
    return null; // read until close
  }
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status, headerList, headers, body, text, json, raw: buf.toString('latin1') };
}
