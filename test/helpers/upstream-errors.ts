import { errors } from 'undici';
import { UpstreamBusyError } from '../../src/worker/pending-queue.js';
import { UpstreamDeniedError } from '../../src/shared/upstream-guard.js';
import { UpstreamCodingError } from '../../src/worker/upstream-failure.js';

/** undici's codes as undici's classes, the gateway's own codes as its classes. */
const BY_CODE: Record<string, () => Error> = {
  UND_ERR_SOCKET: () => new errors.SocketError('other side closed'),
  UND_ERR_CONNECT_TIMEOUT: () => new errors.ConnectTimeoutError(),
  UND_ERR_HEADERS_TIMEOUT: () => new errors.HeadersTimeoutError(),
  UND_ERR_BODY_TIMEOUT: () => new errors.BodyTimeoutError(),
  UND_ERR_INVALID_ARG: () => new errors.InvalidArgumentError('invalid header value'),
  UND_ERR_CLOSED: () => new errors.ClientClosedError(),
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: () => new errors.ResponseContentLengthMismatchError(),
  SY_UPSTREAM_CODING: () => new UpstreamCodingError(),
  SY_UPSTREAM_BUSY: () => new UpstreamBusyError('all connections are busy'),
  SY_UPSTREAM_DENIED: () => new UpstreamDeniedError('upstream refused: loopback'),
};

/**
 * The error an upstream attempt fails with, by the code it carries: undici's class for
 * undici's codes, the gateway's own for its codes, else a Node socket error (a code only).
 */
export function failure(code: string | undefined): Error {
  if (code === undefined) return new Error('no code');
  const make = BY_CODE[code];
  if (make) return make();
  if (code.startsWith('HPE_')) return new (errors.HTTPParserError as unknown as new (m: string, c?: string) => Error)('Parse Error', code.slice(4));
  return Object.assign(new Error(`connect ${code}`), { code });
}
