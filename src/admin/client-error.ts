import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorCode } from '../shared/errors.js';
import { refuseAndClose } from './connection-guard.js';

/** The registry code for what node:http refuses before a request exists; null: just close. */
function codeOf(err: NodeJS.ErrnoException): ErrorCode | null {
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'Svc.Request.HeadTooLarge';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'Svc.Request.Timeout';
  return err.code?.startsWith('HPE_') ? 'Svc.Request.Malformed' : null;
}

/**
 * What node:http refuses before a request exists (a bad request line or chunk, a head
 * over its limit, a head or body too slow) is answered with an envelope too, not Node's
 * bare status line: every error body on the admin port is a JSON envelope.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const code = codeOf(err);
    if (code === null || !socket.writable) return void socket.destroy();
    // Bytes pipelined behind a complete request still being handled: an envelope now would
    // stand in for that request's own answer. Its answer goes out, then the connection
    // closes. (A request whose own body failed, or an idle keep-alive connection after a
    // complete answer, gets the envelope.)
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (inFlight && (inFlight.headersSent || inFlight.req.complete)) {
      inFlight.once('close', () => socket.destroy());
      return;
    }
    refuseAndClose(socket, code);
  });
}
