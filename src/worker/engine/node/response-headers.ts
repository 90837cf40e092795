import type { OutgoingHttpHeaders } from 'node:http2';
import type { IdEcho } from '../contract.js';

/**
 * Lines an engine writes itself (framing, connection management) and that HTTP/2 forbids
 * (RFC 9113 §8.2.2): never copied from a head; the engine sets its own.
 */
const OWN = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'content-length', 'http2-settings']);

const isOwn = (lowerName: string): boolean => OWN.has(lowerName);

const NON_ASCII = /[\u0080-\uffff]/;

/**
 * A header value as node writes it: node sends header strings as latin1, while a value
 * from an upstream or a route may hold UTF-8 text (a filename with accents); its UTF-8
 * bytes go out as they came (uWS writes strings as UTF-8).
 */
const wire = (value: string): string => (NON_ASCII.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value);

/** The id echo's header name, lower case; '' without an echo. */
export const idNameOf = (id: IdEcho): string => (id === null ? '' : id[0].toLowerCase());

/** HTTP/1.1: node's flat header list (name, value, …), the id echo replacing any line of its name. */
export function h1Headers(headers: readonly (readonly [string, string])[], id: IdEcho, contentLength: number | undefined, close: boolean): string[] {
  return h1Tail(h1Lines(headers, idNameOf(id)), id, contentLength, close);
}

/** A head's own lines as node's flat list: the engine's own lines and those named `idName` left out. */
export function h1Lines(headers: readonly (readonly [string, string])[], idName: string): string[] {
  const out: string[] = [];
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (isOwn(lower) || lower === idName) continue;
    out.push(name, wire(value));
  }
  return out;
}

/** Appends to `out` what an HTTP/1.1 answer adds to its head's lines: the id echo, the length, the close. */
export function h1Tail(out: string[], id: IdEcho, contentLength: number | undefined, close: boolean): string[] {
  if (id !== null) out.push(id[0], id[1]);
  if (contentLength !== undefined) out.push('content-length', String(contentLength));
  if (close) out.push('connection', 'close');
  return out;
}

/** HTTP/2: one header object (repeated names as arrays), names lower case, connection-specific lines left out. */
export function h2Headers(headers: readonly (readonly [string, string])[], id: IdEcho, contentLength: number | undefined): OutgoingHttpHeaders {
  const idName = idNameOf(id);
  return h2Tail(h2Fields(headers, idName), id, idName, contentLength);
}

/** A head's own lines as one h2 header object: connection-specific lines and those named `idName` left out. */
export function h2Fields(headers: readonly (readonly [string, string])[], idName: string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (isOwn(lower) || lower === idName || lower === 'te') continue;
    const had = out[lower];
    const v = wire(value);
    if (had === undefined) out[lower] = v;
    else if (Array.isArray(had)) had.push(v);
    else out[lower] = [String(had), v];
  }
  return out;
}

/** Adds to `out` what an h2 answer adds to its head's lines: the id echo (`idName` its name), the length. */
export function h2Tail(out: OutgoingHttpHeaders, id: IdEcho, idName: string, contentLength: number | undefined): OutgoingHttpHeaders {
  if (id !== null) out[idName] = id[1];
  if (contentLength !== undefined) out['content-length'] = contentLength;
  return out;
}
