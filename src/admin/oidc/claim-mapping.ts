import type { OidcMappingConfig } from '../../shared/gateway-config-oidc.js';
import type { Identity } from '../identity.js';
import { masksOf } from '../scopes.js';

/** A claim holds `value` when it is that string, or a list of strings containing it (groups, roles). */
function holds(claim: unknown, value: string): boolean {
  if (typeof claim === 'string') return claim === value;
  return Array.isArray(claim) && claim.some((c) => c === value);
}

/**
 * The mapping that decides what a signed-in user may do: the first, in worker.json's
 * order, whose claim holds its value. One mapping decides alone (scopes are never
 * merged across mappings), so an operator reads a user's grant off one line.
 * A mapping on `email` needs `email_verified: true`: many providers let users type any address.
 */
export function firstMatch(mappings: readonly OidcMappingConfig[], claims: Record<string, unknown>): OidcMappingConfig | null {
  return mappings.find((m) => holds(claims[m.claim], m.value) && (m.claim !== 'email' || claims.email_verified === true)) ?? null;
}

/** The claims the mappings read: what the userinfo endpoint is asked for when the ID token lacks one. */
export function mappedClaims(mappings: readonly OidcMappingConfig[]): string[] {
  const names = new Set(mappings.map((m) => m.claim));
  if (names.has('email')) names.add('email_verified');
  return [...names];
}

/**
 * The admin identity of a console session: id `oidc:<sub>` (what the audit trail and
 * the log name), the mapping's tenant and scopes, expiring with the session.
 */
export function sessionIdentity(sub: string, email: string | null, mapping: OidcMappingConfig, expiresAt: number): Identity {
  return {
    id: `oidc:${sub}`,
    kind: mapping.tenant === null ? 'system' : 'tenant',
    tenant: mapping.tenant,
    scopes: [...mapping.scopes],
    masks: masksOf(mapping.scopes),
    expiresAt,
    session: { name: email ?? sub },
  };
}
