import * as v from 'valibot';
import type { Flow, StepOutcome } from '../step.js';
import { headerSafe, stepError } from '../reply.js';

/**
 * What the identity steps (jwt-auth, oauth-introspection, oidc-login) do with a verified
 * set of claims, in one place so the three agree: required scopes (403 insufficient_scope,
 * RFC 6750 §3.1), required claims (403), then claims copied to upstream headers. The
 * headers are the steps' ownedHeaders, so a client's own copies never reach the upstream.
 */

const HeaderName = v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/, 'must be a header name'), v.toLowerCase());
const ClaimName = v.pipe(v.string(), v.minLength(1), v.maxLength(128));
const ClaimValue = v.union([v.string(), v.number(), v.boolean()]);

/** Settings fields shared by the identity steps. */
export const IdentityFields = {
  /** Claim name → upstream header (`{"email": "x-user-email"}`). */
  claims: v.optional(v.pipe(v.record(ClaimName, HeaderName), v.check((r) => Object.keys(r).length <= 32, 'at most 32 claims')), {}),
  /** Scopes the token must all hold (`scope`, space-separated, or `scp`, a list). */
  requiredScopes: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be a scope token'))), v.maxLength(32)), []),
  /** Claims the token must carry: a value, or a list of accepted values (a list claim must contain one of them). */
  requiredClaims: v.optional(v.pipe(v.record(ClaimName, v.union([ClaimValue, v.pipe(v.array(ClaimValue), v.minLength(1))])), v.check((r) => Object.keys(r).length <= 32, 'at most 32 claims')), {}),
};

export interface IdentitySettings {
  claims: Record<string, string>;
  requiredScopes: string[];
  requiredClaims: Record<string, string | number | boolean | (string | number | boolean)[]>;
}

/** The headers the claim mapping sets (for ownedHeaders). */
export function claimHeaders(s: IdentitySettings): string[] {
  return Object.values(s.claims);
}

/** A claim's value as one header value: lists joined with ',', objects as JSON, unsafe bytes percent-encoded. */
export function claimHeaderValue(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return headerSafe(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')) return headerSafe(value.join(','));
  return headerSafe(JSON.stringify(value));
}

/** The token's scopes: `scope` (RFC 8693 §4.2, a space-separated string) or `scp` (a list). */
export function scopesOf(claims: Record<string, unknown>): Set<string> {
  if (typeof claims.scope === 'string') return new Set(claims.scope.split(' ').filter(Boolean));
  if (Array.isArray(claims.scp)) return new Set(claims.scp.filter((x): x is string => typeof x === 'string'));
  if (typeof claims.scp === 'string') return new Set(claims.scp.split(' ').filter(Boolean));
  return new Set();
}

function claimMatches(actual: unknown, wanted: string | number | boolean | (string | number | boolean)[]): boolean {
  const accepted = Array.isArray(wanted) ? wanted : [wanted];
  if (Array.isArray(actual)) return actual.some((a) => accepted.includes(a as never));
  return accepted.includes(actual as never);
}

/**
 * Checks a verified token's claims against the settings and copies the mapped ones onto
 * the upstream request. Built once per step: the answers are made here, not per request.
 */
export function identityApplier(s: IdentitySettings): (flow: Flow, claims: Record<string, unknown>) => StepOutcome {
  const scopes = s.requiredScopes;
  const required = Object.entries(s.requiredClaims);
  const mapped = Object.entries(s.claims);
  const noScope = stepError('Svc.Data.Forbidden', `The token lacks a required scope (${scopes.join(' ')})`, {
    'www-authenticate': `Bearer error="insufficient_scope", scope="${scopes.join(' ')}"`,
  });
  const noClaim = stepError('Svc.Data.Forbidden', 'The token lacks a required claim');
  return (flow, claims) => {
    if (scopes.length > 0) {
      const held = scopesOf(claims);
      for (const sc of scopes) if (!held.has(sc)) return noScope;
    }
    for (const [name, wanted] of required) if (!claimMatches(claims[name], wanted)) return noClaim;
    for (const [name, header] of mapped) {
      const value = claimHeaderValue(claims[name]);
      if (value !== null) flow.setHeader(header, value);
    }
    return undefined;
  };
}
