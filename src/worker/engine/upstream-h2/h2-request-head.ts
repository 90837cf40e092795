import type { OutgoingHttpHeaders } from 'node:http2';
import { errors, type Dispatcher } from 'undici';

/**
 * Connection-specific fields HTTP/2 forbids in a request (RFC 9113 §8.2.2): node:http2
 * refuses a request carrying one, so they are dropped here. `te` is allowed only as
 * "trailers" (what gRPC sends), and `host` becomes `:authority`.
 */
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'http2-settings']);

type Value = string | string[] | number | undefined;

/** undici's checks on a request's fields (a DEL byte gets through the uWS engine; HPACK would carry CR LF). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

function checked(name: string, value: string | string[] | number): string | string[] | number {
  if (!TOKEN.test(name)) throw new errors.InvalidArgumentError('invalid header key');
  for (const v of Array.isArray(value) ? value : [value]) if (typeof v === 'string' && BAD_VALUE.test(v)) throw new errors.InvalidArgumentError(`invalid ${name} header`);
  return value;
}

/**
 * The HEADERS of a request from undici's dispatch options: the pseudo-headers (`:scheme`
 * from the target, `:authority` from Host or else the target's host:port) and the
 * request's own fields, names in lower case, repeated names as one list. Field names
 * that start with `:` are not the request's to set and are dropped. A name or value
 * undici would refuse throws its InvalidArgumentError (400, nothing sent).
 */
export function h2RequestHead(opts: Dispatcher.DispatchOptions, scheme: 'http' | 'https', targetAuthority: string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ':method': opts.method, ':scheme': scheme, ':path': opts.path };
  let authority: string | undefined;
  const add = (raw: string, value: Value): void => {
    if (value === undefined) return;
    const name = raw.toLowerCase();
    checked(raw, value);
    if (CONNECTION_SPECIFIC.has(name) || name.startsWith(':')) return;
    if (name === 'host') {
      authority ??= String(Array.isArray(value) ? value[0] : value);
      return;
    }
    if (name === 'te' && String(value).trim().toLowerCase() !== 'trailers') return;
    const have = out[name];
    if (have === undefined) out[name] = value;
    else out[name] = [...(Array.isArray(have) ? have : [String(have)]), ...(Array.isArray(value) ? value : [String(value)])];
  };
  const h = opts.headers as unknown;
  if (Array.isArray(h)) {
    for (let i = 0; i + 1 < h.length; i += 2) add(String(h[i]), h[i + 1] as Value);
  } else if (h !== null && typeof h === 'object') {
    const pairs = Symbol.iterator in h ? (h as Iterable<[string, Value]>) : Object.entries(h as Record<string, Value>);
    for (const [k, v] of pairs) add(k, v);
  }
  out[':authority'] = authority ?? targetAuthority;
  return out;
}

/** The response's raw head as undici hands it to onHeaders: name, value, … Buffers, pseudo-headers left out. */
export function rawHead(raw: readonly string[]): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    // node:http2 gives the field bytes as latin1 strings: back to the same bytes.
    if (name.charCodeAt(0) !== 58 /* ':' */) out.push(Buffer.from(name, 'latin1'), Buffer.from(raw[i + 1]!, 'latin1'));
  }
  return out;
}

/** Trailers as onComplete gets them: a flat `[name, value, …]` of strings, or null when there are none. */
export function flatTrailers(raw: readonly string[] | undefined): string[] | null {
  if (raw === undefined || raw.length === 0) return null;
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.charCodeAt(0) !== 58) out.push(raw[i]!.toLowerCase(), raw[i + 1]!);
  return out.length ? out : null;
}
