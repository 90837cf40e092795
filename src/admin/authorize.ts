import { SvcError } from '../shared/errors.js';
import type { Operation } from './contract.js';
import type { Identity } from './identity.js';
import type { Params } from './op-router.js';
import { BITS, requiredScope } from './scopes.js';
import type { SessionResolver } from './oidc/console-sessions.js';

/** Resolves a bearer token to an identity (system keys now, tenant sub-keys later). */
export interface TokenResolver {
  resolve(token: string): Identity | null | Promise<Identity | null>;
}

/** A console session cookie a call presented, and whether it also sent the console's header. */
export interface SessionCredential {
  id: string;
  /** The custom header (x-switchyard-console: 1) a cross-site form or link cannot send: the CSRF check. */
  consoleHeader: boolean;
  resolver: SessionResolver;
}

/** The auth scheme's name is case-insensitive (RFC 9110 §11.1): `bearer …` works too. */
const BEARER = /^Bearer +([\x21-\x7e]{1,512})$/i;

/**
 * The auth gate of the admin port, in a fixed order: authenticate (401), then
 * checkAccess: tenant boundary (403 TenantScope), scope (403 Scope). Two calls, so a
 * refused call is still logged with the identity that was refused.
 */
export async function authenticate(op: Operation, authorization: string | undefined, resolvers: readonly TokenResolver[], session?: SessionCredential): Promise<Identity | null> {
  if (op.auth === 'none') return null;
  // A bearer token wins; without one, a console session (admin.oidc) may stand in.
  if (authorization === undefined && session !== undefined) return sessionIdentity(session);
  const m = authorization ? BEARER.exec(authorization) : null;
  if (!m) throw new SvcError('Svc.Auth.Unauthenticated', 'A bearer token is required (Authorization: Bearer <token>)');
  let identity: Identity | null = null;
  for (const r of resolvers) {
    identity = await r.resolve(m[1]!);
    if (identity) break;
  }
  if (!identity) throw new SvcError('Svc.Auth.Unauthenticated', 'The token is unknown, expired or revoked');
  return identity;
}

function sessionIdentity(session: SessionCredential): Identity {
  if (!session.consoleHeader) throw new SvcError('Svc.Auth.Unauthenticated', 'A console session is accepted only with the header x-switchyard-console: 1');
  const identity = session.resolver.resolveSession(session.id);
  if (!identity) throw new SvcError('Svc.Auth.Unauthenticated', 'The console session is unknown, expired or signed out');
  return identity;
}

export function checkAccess(op: Operation, params: Params, identity: Identity | null): void {
  const refused = identity === null ? null : accessDenial(op, params.tenant, identity);
  if (refused) throw refused;
}

/**
 * Why `identity` may not call `op` on `tenant` (undefined for instance-level paths), or
 * null when it may. The one rule: the auth gate throws it, the console model asks it.
 */
export function accessDenial(op: Operation, tenant: string | undefined, identity: Identity): SvcError | null {
  if (identity.tenant !== null) {
    if (op.level === 'instance' && op.auth === 'scope') {
      return new SvcError('Svc.Auth.TenantScope', `This key is bound to tenant ${identity.tenant}; ${op.path} is instance-level`);
    }
    if (op.level === 'tenant' && tenant !== identity.tenant) {
      return new SvcError('Svc.Auth.TenantScope', `This key is bound to tenant ${identity.tenant} and cannot reach tenant ${tenant}`);
    }
  }
  if (op.auth === 'scope' && (identity.masks[op.family] & BITS[op.access]) === 0) {
    const scope = requiredScope(op.family, op.access);
    return new SvcError('Svc.Auth.Scope', `Missing scope ${scope}`, { requiredScope: scope });
  }
  return null;
}
