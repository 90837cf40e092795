import type { IdentitySettings } from './claims.js';
import type { Introspected } from './introspection-cache.js';

/**
 * The claims oauth-introspection keeps of an answer: only those the step reads, so a
 * large answer (an endpoint may send 64 KiB of claims for any token) does not sit in the
 * per-worker cache every tenant's routes share.
 */

export interface KeptClaimsSettings extends IdentitySettings {
  audience?: string;
}

/** The claim names the step reads: sub (subject header), exp and nbf, aud when `audience` is set, scope/scp when scopes are required, the mapped and required claims. */
export function keptClaimNames(s: KeptClaimsSettings): string[] {
  const names = new Set(['sub', 'exp', 'nbf']);
  if (s.audience !== undefined) names.add('aud');
  if (s.requiredScopes.length > 0) for (const n of ['scope', 'scp']) names.add(n);
  for (const n of Object.keys(s.claims)) names.add(n);
  for (const n of Object.keys(s.requiredClaims)) names.add(n);
  return [...names];
}

/** Built once per step: an answer with its claims cut down to `keptClaimNames`. */
export function claimsKeeper(s: KeptClaimsSettings): (a: Introspected) => Introspected {
  const names = keptClaimNames(s);
  return (a) => {
    if (!a.active) return a;
    const kept: Record<string, unknown> = {};
    for (const n of names) if (Object.hasOwn(a.claims, n)) kept[n] = a.claims[n];
    return { active: true, claims: kept, expMs: a.expMs };
  };
}
