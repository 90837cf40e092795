import type { OrchDoc } from './orch-doc';

/**
 * Would a link `from → to` close a cycle? Links join units (a node, or a group standing
 * for its members), so the walk maps every endpoint to its unit first. The server
 * rejects cycles at dry-run (Compile.Orch.LinkCycle); the link picker just does not offer them.
 */
export function wouldCycle(doc: OrchDoc, from: string, to: string, unit: (id: string) => string): boolean {
  const start = unit(to);
  const goal = unit(from);
  if (start === goal) return true;
  const next = new Map<string, string[]>();
  for (const l of doc.links) {
    const a = unit(l.from);
    (next.get(a) ?? next.set(a, []).get(a)!).push(unit(l.to));
  }
  const seen = new Set<string>([start]);
  const stack = [start];
  while (stack.length) {
    for (const n of next.get(stack.pop()!) ?? []) {
      if (n === goal) return true;
      if (!seen.has(n)) {
        seen.add(n);
        stack.push(n);
      }
    }
  }
  return false;
}
