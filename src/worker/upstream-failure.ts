import { upstreamDenied } from '../shared/upstream-guard.js';
import type { ErrorCode } from '../shared/errors.js';
import { UPSTREAM_BUSY, refusedBeforeSending, upstreamBusy } from '../shared/target-pool.js';

/** Failures before any answer byte: another attempt may succeed (a busy pool's refusal sent nothing). */
export function retriable(err: Error): boolean {
  const code = (err as { code?: string }).code ?? '';
  return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', UPSTREAM_BUSY].includes(code);
}

export function errorCode(err: Error): ErrorCode {
  if (refusedBeforeSending(err)) return 'Svc.Data.BadRequest'; // the client's bytes, not the upstream
  if (upstreamBusy(err)) return 'Svc.Data.UpstreamBusy'; // no connection within the cluster's budget
  if (upstreamDenied(err)) return 'Svc.Data.UpstreamDenied'; // worker.json's upstream policy
  const code = (err as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'Svc.Data.UpstreamTimeout';
  // llhttp's refusals (HPE_*: bad framing, obs-fold, …) and a transfer coding undici does not undo.
  // undici 7.30 leaves HTTPParserError's code undefined (it looks the llhttp number up in
  // a name-to-number table): its name is what identifies it.
  if (code === 'SY_UPSTREAM_CODING' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' || code?.startsWith('HPE_') || err.name === 'HTTPParserError') {
    return 'Svc.Data.UpstreamInvalid';
  }
  return 'Svc.Data.UpstreamUnreachable';
}
