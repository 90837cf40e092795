import type { Duplex } from 'node:stream';
import { statusLine, type StaticReply } from '../../response-head.js';
import type { IdEcho } from '../contract.js';
import { h1Headers } from './response-headers.js';

/**
 * HTTP/1.1 answers written straight to a socket node's parser no longer answers on: the
 * engine's refusals (connection cap, head deadline, parse errors) and any answer on a
 * WebSocket handshake's path, which node hands over as a bare socket. Each closes the connection.
 */

/** A head block: status line, header lines (the id echo and `connection: close` added), the blank line. */
export function h1HeadText(status: number, reason: string, headers: readonly (readonly [string, string])[], id: IdEcho, contentLength: number | undefined, chunked: boolean): string {
  const flat = h1Headers(headers, id, contentLength, true);
  if (chunked) flat.push('transfer-encoding', 'chunked');
  let s = `HTTP/1.1 ${statusLine(status, reason || undefined)}\r\n`;
  for (let i = 0; i < flat.length; i += 2) s += `${flat[i]}: ${flat[i + 1]}\r\n`;
  return s + '\r\n';
}

/** A fixed reply as bytes; `headOnly` (HEAD) and bodyless statuses carry no body. */
export function staticReplyBytes(r: StaticReply, id: IdEcho, headOnly: boolean): Buffer {
  const head = h1HeadText(r.status, '', r.headers, id, r.bodyless ? undefined : r.bodyBytes, false);
  if (headOnly || r.bodyless) return Buffer.from(head, 'latin1');
  return Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(r.body)]);
}

/** Writes a fixed reply and closes the socket once it is out (destroyed if it cannot be written). */
export function refuseOn(socket: Duplex, r: StaticReply): void {
  if (socket.destroyed) return;
  if (!socket.writable) return void socket.destroy();
  socket.end(staticReplyBytes(r, null, false));
  // A client that never reads must not hold the socket open.
  setTimeout(() => socket.destroy(), 2_000).unref();
}
