import type { CompiledRoute, CompiledStep } from '../contracts/generation.js';
import type { KeySourceSpec } from '../contracts/key-sets.js';
import type { StepRegistry } from '../steps/step-registry.js';

/** Every step of the routes that forward (group members included), in order. */
function eachStep(routes: readonly CompiledRoute[], fn: (s: Extract<CompiledStep, { kind: 'step' }>) => void): void {
  const walk = (list: readonly CompiledStep[]): void => {
    for (const s of list) {
      if (s.kind === 'group') for (const m of s.members) walk(m);
      else fn(s);
    }
  };
  for (const r of routes) if (r.terminal.type === 'cluster') walk(r.terminal.steps);
}

/**
 * The key sets the routes' steps need fetched (StepDefinition.keySources), one per id:
 * steps naming the same source share it, with the shortest minRefreshSeconds and maxStaleSeconds.
 */
export function keySources(routes: readonly CompiledRoute[], steps: StepRegistry): KeySourceSpec[] {
  const byId = new Map<string, KeySourceSpec>();
  eachStep(routes, (s) => {
    for (const spec of steps.get(s.code)?.keySources?.(s.settings, s.tenant) ?? []) {
      const had = byId.get(spec.id);
      byId.set(spec.id, had ? { ...had, minRefreshSeconds: Math.min(had.minRefreshSeconds, spec.minRefreshSeconds), maxStaleSeconds: Math.min(had.maxStaleSeconds, spec.maxStaleSeconds) } : spec);
    }
  });
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The step codes the routes use. */
export function usedCodes(routes: readonly CompiledRoute[]): Set<string> {
  const codes = new Set<string>();
  eachStep(routes, (s) => codes.add(s.code));
  return codes;
}
