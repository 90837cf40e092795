/**
 * Scopes: `{family}:{read|write|*}` or `*`. A grant is a bit mask per family:
 * 1 read, 2 write, 4 lifecycle. `write` also grants lifecycle: lifecycle verbs
 * (plugin enable/disable) are writes that the contract labels separately.
 */
import { FAMILIES, type Family } from '../contracts/scopes.js';

export type Access = 'read' | 'write' | 'lifecycle';

export const BITS: Record<Access, number> = { read: 1, write: 2, lifecycle: 4 };
const ALL = 7;

function bitsOf(op: string): number {
  if (op === 'read') return BITS.read;
  if (op === 'write') return BITS.write | BITS.lifecycle;
  return ALL;
}

/** Family -> bits, for every known family (0 where nothing is granted). */
export function masksOf(scopes: readonly string[]): Record<Family, number> {
  const masks = Object.fromEntries(FAMILIES.map((f) => [f, 0])) as Record<Family, number>;
  for (const s of scopes) {
    if (s === '*') {
      for (const f of FAMILIES) masks[f] = ALL;
      continue;
    }
    const [family, op] = s.split(':') as [string, string];
    if (family in masks) masks[family as Family] |= bitsOf(op);
  }
  return masks;
}

/** The scope string an operation needs, as named in a Svc.Auth.Scope message. */
export function requiredScope(family: Family, access: Access): string {
  return `${family}:${access === 'read' ? 'read' : 'write'}`;
}

export function unknownFamilies(scopes: readonly string[]): string[] {
  return scopes
    .filter((s) => s !== '*')
    .map((s) => s.split(':')[0] as string)
    .filter((f) => !(FAMILIES as readonly string[]).includes(f));
}

/** True when every grant in `sub` is also held by `sup` (tenant sub-keys may not exceed their issuer). */
export function isSubset(sub: Record<Family, number>, sup: Record<Family, number>): boolean {
  return FAMILIES.every((f) => (sub[f] & ~sup[f]) === 0);
}

/**
 * The first grant of `scope` that `holder` lacks, named as a scope string
 * (`config:read`, `config:write`), or null when `holder` covers it entirely.
 */
export function firstUncovered(scope: string, holder: Record<Family, number>): string | null {
  const wanted = masksOf([scope]);
  for (const f of FAMILIES) {
    const missing = wanted[f] & ~holder[f];
    if (missing & BITS.read) return `${f}:read`;
    if (missing) return `${f}:write`;
  }
  return null;
}
