import type { DataPortLimits } from '../contracts/ipc.js';
import type { ErrorCode } from '../shared/errors.js';
import type { LimitEvents } from './limit-events.js';
import type { RequestHead } from './engine/contract.js';

// The checks of a request the data server makes before routing it, beside the Host and path
// checks (host-header.ts, normalize-path.ts).
/**
 * The request-target and Content-Length limits, judged before routing: the refusal's code,
 * or null. A chunked body is counted as it arrives (request-body.ts).
 */
export function overLimit(req: RequestHead, url: string, limits: DataPortLimits, events: LimitEvents): ErrorCode | null {
  // uWS gives null, not '', for a target without a query.
  const query = req.getQuery() as string | null | undefined;
  if (url.length + (query ? query.length + 1 : 0) > limits.maxTargetBytes) {
    events.hit('maxTargetBytes', { length: url.length });
    return 'Svc.Data.TargetTooLong';
  }
  if (limits.chunkedRequestBodies === 'refuse' && req.getHeader('transfer-encoding') !== '') {
    events.hit('chunkedRequestBodies');
    return 'Svc.Data.LengthRequired';
  }
  const length = req.getHeader('content-length');
  if (length !== '' && Number(length) > limits.maxBodyBytes) {
    events.hit('maxBodyBytes', { contentLength: length });
    return 'Svc.Data.BodyTooLarge';
  }
  return null;
}

/**
 * A method as nginx accepts one: upper-case letters, `-`, `_`. uWS passes `get` or `Post`
 * on, which routes and steps (method-exact) would not see as GET or POST while an upstream
 * that folds case would.
 */
export function methodOk(method: string): boolean {
  for (let i = 0; i < method.length; i++) {
    const c = method.charCodeAt(i);
    if ((c < 65 || c > 90) && c !== 45 && c !== 95) return false;
  }
  return method.length > 0;
}
