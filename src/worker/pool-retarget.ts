import type { CompiledCluster } from '../contracts/generation.js';

/**
 * A DNS cluster's targets changed (pure helpers of ClusterPools' rebuild): whether the
 * expanded lists differ at all, and where each new target was in the old list, so an
 * address that stays keeps its connections, its hold-off, its failures in a row and its
 * balancer score, and only a new one starts afresh.
 */

export function sameTargets(a: CompiledCluster, b: CompiledCluster): boolean {
  return a.targets.length === b.targets.length && a.targets.every((t, i) => t === b.targets[i]) && String(a.weights) === String(b.weights) && String(a.priorities) === String(b.priorities);
}

/** Per target of `after`, its index in `before` (-1: new). */
export function carriedIndex(before: readonly string[], after: readonly string[]): number[] {
  const at = new Map(before.map((t, i) => [t, i]));
  return after.map((t) => at.get(t) ?? -1);
}

/** The indexes of `before` no target of `after` carries (their pools close once drained). */
export function removedIndexes(beforeLength: number, from: readonly number[]): number[] {
  const kept = new Set(from);
  const out: number[] = [];
  for (let j = 0; j < beforeLength; j++) if (!kept.has(j)) out.push(j);
  return out;
}

/** `values[from[i]]` for each kept target, `fresh` for a new one. */
export function carried<T>(values: readonly T[], from: readonly number[], fresh: T): T[] {
  return from.map((j) => (j >= 0 ? values[j]! : fresh));
}
