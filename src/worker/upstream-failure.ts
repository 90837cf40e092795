import { errors } from 'undici';
import type { ErrorCode } from '../shared/errors.js';
import type { UpstreamErrorKind } from '../contracts/metrics.js';
import { UpstreamBusyError } from './pending-queue.js';
import { refusedBeforeSending } from '../shared/upstream-refusal.js';
import { UpstreamDeniedError } from '../shared/upstream-guard.js';
import { UpstreamTlsError, tlsErrorCode } from '../shared/upstream-tls.js';
import { RequestBodyRefused } from './request-body.js';
import { GrpcWebTextError } from './grpc/grpc-web-text-decoder.js';
import { H2StreamResetError } from './engine/upstream-h2/h2-errors.js';
import { StepHookError } from './step-hook-error.js';
import { NoTargetsError } from './no-targets.js';

/**
 * What an upstream attempt's failure means, from the error's type: undici's error classes
 * (matched by `instanceof`, which undici answers by a registered symbol, so any copy of
 * undici matches), the gateway's own below, and Node's socket errors, which have only a
 * `code`. The proxy's answer, the retry step and the send-again decision all read this.
 */

/** The upstream used a transfer coding undici does not undo (`gzip, chunked`): 502, as nginx and Envoy answer. */
export class UpstreamCodingError extends Error {
  override readonly name = 'UpstreamCodingError';
  readonly code = 'SY_UPSTREAM_CODING';
  constructor(message = 'the upstream used a transfer coding other than chunked') {
    super(message);
  }
}

const socketCode = (err: Error): string | undefined => (err as NodeJS.ErrnoException).code;

/** Node's socket errors for a connection that was never made: not a byte reached the upstream. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * No connection was made: refused, timed out, unreachable, unresolvable, refused by the
 * upstream policy, or its TLS handshake failed (nothing was sent: it fails over and is held off).
 */
export function connectFailed(err: Error): boolean {
  return err instanceof errors.ConnectTimeoutError || err instanceof UpstreamDeniedError || err instanceof UpstreamTlsError || NOT_CONNECTED.has(socketCode(err) ?? '');
}

/**
 * The connection was closed or reset under the request (undici: 'other side closed',
 * 'closed'), or, on HTTP/2, the upstream reset the request's stream (RST_STREAM).
 */
export function connectionClosed(err: Error): boolean {
  if (err instanceof errors.SocketError || err instanceof H2StreamResetError) return true;
  const code = socketCode(err);
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/** Failures before any answer byte: another attempt may succeed (a busy pool's refusal sent nothing). */
export function retriable(err: Error): boolean {
  return (
    socketCode(err) === 'ECONNREFUSED' ||
    err instanceof errors.ConnectTimeoutError ||
    connectionClosed(err) ||
    err instanceof errors.HeadersTimeoutError ||
    err instanceof UpstreamBusyError
  );
}

/** The `kind` label of switchyard_upstream_errors_total for an attempt that got no answer. */
export function failureKind(err: Error): Exclude<UpstreamErrorKind, 'status'> {
  if (err instanceof UpstreamTlsError || tlsErrorCode(socketCode(err))) return 'tls';
  if (connectFailed(err) || err instanceof UpstreamBusyError) return 'connect';
  if (err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError) return 'timeout';
  if (connectionClosed(err)) return 'reset';
  return 'other';
}

/** The registry code the client is answered with for a failure before the response head. */
export function errorCode(err: Error): ErrorCode {
  if (err instanceof StepHookError) return 'Svc.Data.StepFailed'; // a step's response hook broke on the answer
  if (err instanceof RequestBodyRefused) return err.code; // the client's body broke a data-port limit
  if (refusedBeforeSending(err) || err instanceof GrpcWebTextError) return 'Svc.Data.BadRequest'; // the client's bytes, not the upstream
  if (err instanceof UpstreamBusyError) return 'Svc.Data.UpstreamBusy'; // no connection within the cluster's budget
  if (err instanceof NoTargetsError) return 'Svc.Data.NoTargets'; // a DNS cluster before its first addresses
  if (err instanceof UpstreamDeniedError) return 'Svc.Data.UpstreamDenied'; // worker.json's upstream policy
  // A failed handshake, or a TLS alert after it (an upstream refusing the client certificate).
  if (err instanceof UpstreamTlsError || tlsErrorCode(socketCode(err))) return 'Svc.Data.UpstreamTls';
  if (err instanceof errors.HeadersTimeoutError || err instanceof errors.ConnectTimeoutError || err instanceof errors.BodyTimeoutError) {
    return 'Svc.Data.UpstreamTimeout';
  }
  // llhttp's refusals (bad framing, obs-fold, …; undici 7 may leave their code unset) and
  // a transfer coding undici does not undo.
  if (err instanceof errors.HTTPParserError || err instanceof errors.ResponseContentLengthMismatchError || err instanceof UpstreamCodingError) {
    return 'Svc.Data.UpstreamInvalid';
  }
  return 'Svc.Data.UpstreamUnreachable';
}
