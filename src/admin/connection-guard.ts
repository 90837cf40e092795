import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { ERRORS, errorEnvelope, type ErrorCode } from '../shared/errors.js';
import { newTraceId } from '../shared/trace-id.js';

/** How long a refused connection may keep its descriptor while its answer drains. */
const LINGER_MS = 1_000;

/**
 * Answers `code` as a JSON envelope on a connection node:http will not use again and
 * frees it. A client that reads the answer and closes frees it at once; one that never
 * does is destroyed after LINGER_MS (an ended socket would otherwise stay open for as
 * long as the client keeps its side open). Destroying at once could reset the
 * connection under a client still sending, which then loses the answer; `linger: false`
 * (a connection over the cap, nothing read from it) destroys it once the answer is out.
 */
export function refuseAndClose(socket: Socket, code: ErrorCode, linger = true): void {
  const traceId = newTraceId();
  const body = JSON.stringify(errorEnvelope(code, traceId));
  const status = ERRORS[code].status;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  const done = linger ? undefined : () => socket.destroy();
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-trace-id: ${traceId}\r\nconnection: close\r\n\r\n${body}`,
    done,
  );
}

/**
 * Caps the connections one client address holds open on the admin port, so clients that
 * open connections and never finish them cannot use up the supervisor's descriptors and
 * lock the operator out. A connection over the cap is answered 429
 * Svc.Request.TooManyConnections and closed before any request on it is read.
 * Returns the sockets refused, for the request handler to ignore.
 */
export function capConnectionsPerAddress(server: Server, max: number): WeakSet<Socket> {
  const open = new Map<string, number>();
  const refused = new WeakSet<Socket>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const n = (open.get(address) ?? 0) + 1;
    if (n > max) {
      refused.add(socket);
      refuseAndClose(socket, 'Svc.Request.TooManyConnections', false);
      return;
    }
    open.set(address, n);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
  return refused;
}
