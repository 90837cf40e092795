import { createHash } from 'node:crypto';

export interface Variant {
  name: string;
  weight: number;
}

/** The variant whose share of the total weight holds `point` (in [0, 1)). */
export function pickVariant(variants: readonly Variant[], point: number): string {
  const total = variants.reduce((n, v) => n + v.weight, 0);
  let at = point * total;
  for (const v of variants) {
    if (at < v.weight) return v.name;
    at -= v.weight;
  }
  // Rounding at the very top: the last variant with a weight.
  return [...variants].reverse().find((v) => v.weight > 0)!.name;
}

/** A stable point in [0, 1) for a key (a user id): the same user gets the same variant on any gateway. */
export function pointOf(salt: string, key: string): number {
  return createHash('sha256').update(`${salt}\n${key}`).digest().readUInt32BE(0) / 2 ** 32;
}
