import type { OrchDoc } from './documents.js';
import type { CompileIssueCode } from '../shared/errors.js';

export const GROUP_MERGES = ['all', 'any', 'first'] as const;
export const FAILURE_STRATEGIES = ['FailFast', 'Continue'] as const;

/** A unit of a chain's run order: a node outside any group, or a whole group. */
export type ChainUnit = { type: 'node'; index: number } | { type: 'group'; index: number };

export interface ChainProblem {
  pointer: string;
  code: CompileIssueCode;
  message: string;
}

/**
 * The run order of a chain. Links (between node ids or group ids; a link to a grouped
 * node is a link to its group) must form a directed acyclic graph; units run in a
 * topological order, ties broken by the position of their first node in `nodes[]`.
 */
export function chainOrder(doc: OrchDoc): { units: ChainUnit[]; problems: ChainProblem[] } {
  const problems: ChainProblem[] = [];
  const problem = (pointer: string, code: CompileIssueCode, message: string) => problems.push({ pointer, code, message });
  const nodeIndex = new Map<string, number>();
  doc.nodes.forEach((n, i) => {
    if (nodeIndex.has(n.id)) problem(`/nodes/${i}/id`, 'Compile.Orch.Node', `duplicate node id ${n.id}`);
    else nodeIndex.set(n.id, i);
    if (n.failureStrategy !== undefined && !(FAILURE_STRATEGIES as readonly string[]).includes(n.failureStrategy)) {
      problem(`/nodes/${i}/failureStrategy`, 'Compile.Orch.FailureStrategy', `unknown failureStrategy ${n.failureStrategy}; use ${FAILURE_STRATEGIES.join(' or ')}`);
    }
  });

  // unit key -> unit, and every id (node or group) -> its unit key
  const unitOf = new Map<string, string>();
  const units = new Map<string, { unit: ChainUnit; first: number }>();
  (doc.groups ?? []).forEach((g, i) => {
    if (nodeIndex.has(g.id) || units.has(g.id)) problem(`/groups/${i}/id`, 'Compile.Orch.Group', `group id ${g.id} is already a node or group id`);
    if (g.merge !== undefined && !(GROUP_MERGES as readonly string[]).includes(g.merge)) {
      problem(`/groups/${i}/merge`, 'Compile.Orch.Group', `unknown merge ${g.merge}; use ${GROUP_MERGES.join(', ')}`);
    }
    let first = Infinity;
    g.nodes.forEach((id, j) => {
      const idx = nodeIndex.get(id);
      if (idx === undefined) problem(`/groups/${i}/nodes/${j}`, 'Compile.Orch.Group', `no node ${id}`);
      else if (unitOf.has(id)) problem(`/groups/${i}/nodes/${j}`, 'Compile.Orch.Group', `node ${id} is in two groups`);
      else {
        unitOf.set(id, g.id);
        first = Math.min(first, idx);
      }
    });
    units.set(g.id, { unit: { type: 'group', index: i }, first });
    unitOf.set(g.id, g.id);
  });
  doc.nodes.forEach((n, i) => {
    if (!unitOf.has(n.id)) {
      unitOf.set(n.id, n.id);
      units.set(n.id, { unit: { type: 'node', index: i }, first: i });
    }
  });
  if (problems.length) return { units: [], problems };

  const out = new Map<string, Set<string>>([...units.keys()].map((k) => [k, new Set<string>()]));
  const indegree = new Map<string, number>([...units.keys()].map((k) => [k, 0]));
  doc.links.forEach((l, i) => {
    const from = unitOf.get(l.from);
    const to = unitOf.get(l.to);
    if (from === undefined) return problem(`/links/${i}/from`, 'Compile.Orch.Link', `link from unknown node ${l.from}`);
    if (to === undefined) return problem(`/links/${i}/to`, 'Compile.Orch.Link', `link to unknown node ${l.to}`);
    if (from === to) return problem(`/links/${i}`, 'Compile.Orch.LinkCycle', `link ${l.from} -> ${l.to} stays inside one unit`);
    if (!out.get(from)!.has(to)) {
      out.get(from)!.add(to);
      indegree.set(to, indegree.get(to)! + 1);
    }
  });
  if (problems.length) return { units: [], problems };

  // Kahn's algorithm; the ready set is kept ordered by position in nodes[].
  const ready = [...units.keys()].filter((k) => indegree.get(k) === 0);
  const byPosition = (a: string, b: string) => units.get(a)!.first - units.get(b)!.first;
  const order: ChainUnit[] = [];
  while (ready.length) {
    ready.sort(byPosition);
    const k = ready.shift()!;
    order.push(units.get(k)!.unit);
    for (const next of out.get(k)!) {
      indegree.set(next, indegree.get(next)! - 1);
      if (indegree.get(next) === 0) ready.push(next);
    }
  }
  if (order.length !== units.size) {
    const stuck = [...units.keys()].filter((k) => indegree.get(k)! > 0);
    return { units: [], problems: [{ pointer: '/links', code: 'Compile.Orch.LinkCycle', message: `links form a cycle through ${stuck.join(', ')}` }] };
  }
  return { units: order, problems };
}
