import { SvcError } from '../shared/errors.js';
import { isTenantName } from '../shared/tenant-name.js';
import type { Operation } from './contract.js';
import type { Params } from './op-router.js';
import type { Identity } from './identity.js';
import { authenticate, type SessionCredential, type TokenResolver } from './authorize.js';
import type { AuthThrottle } from './auth-throttle.js';
import type { Redactor } from './redact.js';

/*
 * The checks an admin call passes before its body is read, besides checkAccess
 * (authorize.ts). AdminCall.run runs them in order: throttle, authenticate, access, names.
 */

/** Before authenticating: an address out of guesses is refused without its token being looked at. */
export function refuseThrottled(op: Operation, peer: string, throttle: AuthThrottle | undefined): void {
  if (op.auth === 'none' || !throttle) return;
  const wait = throttle.waitMs(peer);
  if (wait > 0) throw new SvcError('Svc.Auth.Throttled', undefined, { retryAfter: Math.max(1, Math.ceil(wait / 1000)) });
}

/** authenticate, with a refused token counted against the peer's allowance. */
export async function authenticateCounted(
  op: Operation,
  authorization: string | undefined,
  peer: string,
  resolvers: readonly TokenResolver[],
  throttle: AuthThrottle | undefined,
  session?: SessionCredential,
): Promise<Identity | null> {
  try {
    return await authenticate(op, authorization, resolvers, session);
  } catch (err) {
    // Only a presented token or session cookie is a guess; a missing header costs nothing.
    if (authorization !== undefined || session !== undefined) throttle?.failed(peer);
    if (throttle) throttle.unauthenticated++;
    throw err;
  }
}

/** A tenant and an entity name are stored: a token pasted there would reach the volume. */
export function checkNameParams(params: Params, redact: Redactor): void {
  for (const p of ['tenant', 'name'] as const) {
    const v = params[p];
    if (v !== undefined && redact.isBearerToken(v)) throw new SvcError('Svc.Request.BadParam', `A bearer token cannot be a ${p}`);
  }
  if (params.tenant !== undefined && !isTenantName(params.tenant)) {
    throw new SvcError('Svc.Request.BadParam', `Invalid tenant name ${JSON.stringify(params.tenant)}`);
  }
}
