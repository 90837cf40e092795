import { errors } from 'undici';
import { UpstreamBusyError } from '../../src/worker/target-pool.js';
import { UpstreamDeniedError } from '../../src/shared/upstream-guard.js';
import { UpstreamCodingError } from '../../src/worker/upstream-failure.js';

/**
 * The error an upstream attempt fails with, by the code it carries: undici's class for
 * undici's codes, the gateway's own for its codes, else a Node socket error (a code only).
 */
export function failure(code: string | undefined): Error {
  switch (code) {
    case undefined:
      return new Error('no code');
    case 'UND_ERR_SOCKET':
      return new errors.SocketError('other side closed');
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new errors.ConnectTimeoutError();
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new errors.HeadersTimeoutError();
    case 'UND_ERR_BODY_TIMEOUT':
      return new errors.BodyTimeoutError();
    case 'UND_ERR_INVALID_ARG':
      return new errors.InvalidArgumentError('invalid header value');
    case 'UND_ERR_CLOSED':
      return new errors.ClientClosedError();
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      return new errors.ResponseContentLengthMismatchError();
    case 'SY_UPSTREAM_CODING':
      return new UpstreamCodingError();
    case 'SY_UPSTREAM_BUSY':
      return new UpstreamBusyError('all connections are busy');
    case 'SY_UPSTREAM_DENIED':
      return new UpstreamDeniedError('upstream refused: loopback');
    default:
      if (code.startsWith('HPE_')) return new (errors.HTTPParserError as unknown as new (m: string, c?: string) => Error)('Parse Error', code.slice(4));
      return Object.assign(new Error(`connect ${code}`), { code });
  }
}
