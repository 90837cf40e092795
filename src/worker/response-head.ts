import { STATUS_CODES } from 'node:http';
import type { RouteMeter } from './observe/meters.js';
import type { ErrorCode } from '../shared/errors.js';
// A response head as uWS wants it: the status line and the header lines in one string
// (one writeStatus call per response; see headBlock). Pure: no uWS object is touched here.
import { fitsCork } from './engine/uws/cork-size.js';

/** A response fixed at compile time (directResponse, redirect) or made on the spot (404, 503). */
export interface StaticReply {
  status: number;
  /** The body's length in bytes (what a GET is sent). */
  bodyBytes: number;
  /** The route's meter, for a route's fixed answer (observe/meters.ts); absent: no route took the request. */
  meter?: RouteMeter;
  /** Status line and header lines as one block (see headBlock), joined once. */
  head: string;
  headers: [string, string][];
  body: string;
  /** The head of the answer to HEAD: `head` with the body's length (see bodylessHead). */
  headOnly: string;
  /** Too large to go out in one write from the request callback (see cork-room.ts). */
  large: boolean;
  /** A 204 or 304: never a body nor a length, whatever the method (RFC 9110 §6.4.1, §8.6). */
  bodyless: boolean;
  /** An error envelope's code and trace id (envelope.ts): a gRPC call gets them as a grpc-status and grpc-message instead. */
  code?: ErrorCode;
  traceId?: string;
}

/** Statuses whose answers never carry a body. */
export function isBodylessStatus(status: number): boolean {
  return status === 204 || status === 304 || status < 200;
}

export function staticReply(status: number, body: string, headers: Record<string, string>): StaticReply {
  const list = Object.entries(headers);
  const head = headBlock(statusLine(status), list);
  if (isBodylessStatus(status)) return { status, bodyBytes: 0, head, headers: list, body: '', headOnly: head, large: false, bodyless: true };
  const bodyBytes = Buffer.byteLength(body);
  return { status, bodyBytes, head, headers: list, body, headOnly: bodylessHead(head, bodyBytes, false), large: !fitsCork(head.length, body), bodyless: false };
}

/**
 * The status line and the header lines as one string for a single writeStatus call.
 * uWS writes `HTTP/1.1 ${status}\r\n` and `${name}: ${value}\r\n` byte for byte, so the
 * wire is the same as one writeHeader per header; but uWS.js copies every string
 * argument of every call into native memory, so one call per head costs less than one
 * per header.
 * Safe because no value holds CR or LF: upstream heads come through llhttp, client
 * headers through uWS's parser, and configured values are checked by their schemas.
 */
export function headBlock(line: string, headers: readonly (readonly [string, string])[]): string {
  let s = line;
  for (let i = 0; i < headers.length; i++) s += '\r\n' + headers[i]![0] + ': ' + headers[i]![1];
  return s;
}

/** Node's table of reason phrases (the node engine writes the same ones). */
const REASONS: Record<number, string | undefined> = STATUS_CODES;
const lines = new Map<number, string>();

/**
 * "503 Service Unavailable", built once per status. An upstream's own reason phrase is
 * kept when it differs from the usual one; the usual one takes the cached line, so no
 * string is built per response.
 */
export function statusLine(status: number, reason?: string): string {
  if (reason && reason !== REASONS[status]) return `${status} ${reason}`;
  let l = lines.get(status);
  if (l === undefined) {
    l = `${status} ${REASONS[status] ?? 'Status'}`;
    lines.set(status, l);
  }
  return l;
}

/**
 * The head of an answer without a body (HEAD, 204, 304), for uWS.js's endWithoutBody()
 * called with no argument. uWS.js 20.30 takes a reported length as body still to come:
 * the response never ends, a keep-alive client's next request hangs, and from inside the
 * request callback uWS aborts the process. So the length goes into the head here, and
 * so does `connection: close`, which endWithoutBody() cannot be asked for without a length.
 */
export function bodylessHead(head: string, contentLength: number | undefined, close: boolean): string {
  let h = head;
  if (contentLength !== undefined) h += `\r\ncontent-length: ${contentLength}`;
  if (close) h += '\r\nconnection: close';
  return h;
}
