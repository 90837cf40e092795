import type { OrchDoc } from './documents.js';

export const GROUP_STRATEGIES = ['all', 'any', 'first'] as const;
export const FAILURE_STRATEGIES = ['FailFast'] as const;

export type ChainUnit = { type: 'node'; index: number } | { type: 'group'; index: number };

export interface ChainProblem {
  pointer: string;
  code: string;
  message: string;
}

/**
 * The run order of a chain: its units (nodes outside any group, and groups) must form
 * one path through `links`. A single unit needs no links.
 */
export function chainOrder(doc: OrchDoc): { units: ChainUnit[]; problems: ChainProblem[] } {
  const problems: ChainProblem[] = [];
  const units = new Map<string, ChainUnit>();
  const grouped = new Set<string>();
  doc.nodes.forEach((n, i) => {
    if (units.has(n.id)) problems.push({ pointer: `/nodes/${i}/id`, code: 'Compile.Orch.Node', message: `duplicate node id ${n.id}` });
    units.set(n.id, { type: 'node', index: i });
    if (n.failureStrategy !== undefined && !(FAILURE_STRATEGIES as readonly string[]).includes(n.failureStrategy)) {
      problems.push({ pointer: `/nodes/${i}/failureStrategy`, code: 'Compile.Orch.FailureStrategy', message: `unknown failureStrategy ${n.failureStrategy}; use ${FAILURE_STRATEGIES.join(', ')}` });
    }
  });
  (doc.groups ?? []).forEach((g, i) => {
    if (units.has(g.id)) problems.push({ pointer: `/groups/${i}/id`, code: 'Compile.Orch.Group', message: `group id ${g.id} is already a node or group id` });
    if (g.strategy !== undefined && !(GROUP_STRATEGIES as readonly string[]).includes(g.strategy)) {
      problems.push({ pointer: `/groups/${i}/strategy`, code: 'Compile.Orch.Group', message: `unknown strategy ${g.strategy}; use ${GROUP_STRATEGIES.join(', ')}` });
    }
    g.nodes.forEach((id, j) => {
      const u = units.get(id);
      if (!u || u.type !== 'node') problems.push({ pointer: `/groups/${i}/nodes/${j}`, code: 'Compile.Orch.Group', message: `no node ${id}` });
      else if (grouped.has(id)) problems.push({ pointer: `/groups/${i}/nodes/${j}`, code: 'Compile.Orch.Group', message: `node ${id} is in two groups` });
      grouped.add(id);
    });
    units.set(g.id, { type: 'group', index: i });
  });
  for (const id of grouped) units.delete(id);
  if (problems.length) return { units: [], problems };

  const next = new Map<string, string>();
  const hasIncoming = new Set<string>();
  doc.links.forEach((l, i) => {
    const p = `/links/${i}`;
    if (!units.has(l.from)) problems.push({ pointer: `${p}/from`, code: 'Compile.Orch.Link', message: `link from ${l.from}: not a node outside a group, nor a group` });
    else if (!units.has(l.to)) problems.push({ pointer: `${p}/to`, code: 'Compile.Orch.Link', message: `link to ${l.to}: not a node outside a group, nor a group` });
    else if (next.has(l.from)) problems.push({ pointer: p, code: 'Compile.Orch.Link', message: `${l.from} links to more than one unit; use a group for parallel work` });
    else if (hasIncoming.has(l.to)) problems.push({ pointer: p, code: 'Compile.Orch.Link', message: `${l.to} has more than one incoming link` });
    else {
      next.set(l.from, l.to);
      hasIncoming.add(l.to);
    }
  });
  if (problems.length) return { units: [], problems };
  const starts = [...units.keys()].filter((id) => !hasIncoming.has(id));
  if (starts.length !== 1) {
    return { units: [], problems: [{ pointer: '/links', code: 'Compile.Orch.Link', message: `links must form one path through every unit (found ${starts.length} starting points)` }] };
  }
  const order: ChainUnit[] = [];
  for (let id: string | undefined = starts[0]; id !== undefined; id = next.get(id)) order.push(units.get(id)!);
  if (order.length !== units.size) {
    return { units: [], problems: [{ pointer: '/links', code: 'Compile.Orch.Link', message: 'links must form one path through every unit' }] };
  }
  return { units: order, problems };
}
