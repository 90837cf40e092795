import { constants } from 'node:http2';
import { errors } from 'undici';

/**
 * What an HTTP/2 stream's failure is, as the handlers read failures: undici's error types
 * where one fits (upstream-failure.ts maps them to the same answers as on HTTP/1.1), and
 * one of our own for a stream the upstream reset (RST_STREAM), which it maps like a
 * reset connection.
 */

/** The code of the error a stream reset by the upstream fails with. */
export const UPSTREAM_H2_RESET = 'SY_UPSTREAM_H2_RESET';

/** RFC 9113 §7 error codes by number, for the message. */
const NAMES = ['NO_ERROR', 'PROTOCOL_ERROR', 'INTERNAL_ERROR', 'FLOW_CONTROL_ERROR', 'SETTINGS_TIMEOUT', 'STREAM_CLOSED', 'FRAME_SIZE_ERROR', 'REFUSED_STREAM', 'CANCEL', 'COMPRESSION_ERROR', 'CONNECT_ERROR', 'ENHANCE_YOUR_CALM', 'INADEQUATE_SECURITY', 'HTTP_1_1_REQUIRED'];

/** The upstream reset the request's stream (RST_STREAM) before its answer ended: like a reset connection (502, retriable). */
export class H2StreamResetError extends Error {
  override readonly name = 'H2StreamResetError';
  readonly code = UPSTREAM_H2_RESET;
  constructor(readonly h2Code: number) {
    super(`the upstream reset the HTTP/2 stream (${NAMES[h2Code] ?? h2Code})`);
  }
}

/** The connection under the stream went away (closed, GOAWAY with an error, session destroyed). */
export const closedUnder = (): Error => new errors.SocketError('other side closed');

/** node:http2's codes for a session that is closing or gone: the request met a closed connection. */
const SESSION_GONE = new Set([
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_INVALID_SESSION',
  'ERR_HTTP2_SOCKET_UNBOUND',
  'ERR_HTTP2_STREAM_CANCEL',
  'ERR_HTTP2_OUT_OF_STREAMS',
]);

/** A stream's 'error' (or what it closed with) as the error the handler gets. */
export function streamFailure(err: Error | null, rstCode: number | undefined): Error {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'ERR_HTTP2_STREAM_ERROR') return new H2StreamResetError(rstCode ?? constants.NGHTTP2_INTERNAL_ERROR);
  if (err === null) return rstCode !== undefined && rstCode !== constants.NGHTTP2_CANCEL ? new H2StreamResetError(rstCode) : closedUnder();
  if (code !== undefined && SESSION_GONE.has(code)) return closedUnder();
  // The socket's own (ECONNRESET, EPIPE, a TLS alert): upstream-failure.ts reads their codes.
  return err;
}

/**
 * What session.request() throws for the request's own bytes (a header name or value
 * HTTP/2 does not carry) as undici's refusal of them: 400, no connection used
 * (shared/upstream-refusal.ts). A throw for the session's state is a closed connection.
 */
export function requestRefusal(err: Error): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== undefined && SESSION_GONE.has(code)) return closedUnder();
  return new errors.InvalidArgumentError(err.message);
}
