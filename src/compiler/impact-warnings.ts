import type { CompiledRoute, CompiledStep, CompileIssue } from '../contracts/generation.js';
import type { EntityRow } from '../contracts/entities.js';
import type { OrchDoc, RouteDoc } from './documents.js';
import { coversHost } from '../shared/route-match.js';

/**
 * Warnings about configuration that is valid but does nothing (they stop no publish): a
 * route a better-ranked one always wins over, a cluster and an orch chain no route uses,
 * steps on a route that answers by itself. `routes`: the publishing tenant's, ranked (rank
 * 0 first); `rows`: its documents.
 */
export function impactWarnings(routes: readonly CompiledRoute[], rows: readonly EntityRow[]): CompileIssue[] {
  return [...shadowed(routes), ...unusedClusters(routes, rows), ...unusedOrchs(rows), ...ignoredSteps(rows)];
}

function shadowed(routes: readonly CompiledRoute[]): CompileIssue[] {
  const out: CompileIssue[] = [];
  // A winner's prefix starts the route's, as written or lowercased (as covers compares): only
  // routes whose prefix is one of the route's own leading slices are compared, not every pair.
  const byPrefix = new Map<string, number[]>();
  const index = (key: string, i: number) => {
    const at = byPrefix.get(key);
    if (!at) byPrefix.set(key, [i]);
    else if (at[at.length - 1] !== i) at.push(i);
  };
  const lower = routes.map((r) => r.pathPrefix.toLowerCase());
  routes.forEach((r, i) => {
    index(`=${r.pathPrefix}`, i);
    index(`~${lower[i]}`, i);
  });
  routes.forEach((r, i) => {
    const candidates: number[] = [];
    for (let k = 0; k <= r.pathPrefix.length; k++) for (const j of byPrefix.get(`=${r.pathPrefix.slice(0, k)}`) ?? []) if (j < i) candidates.push(j);
    for (let k = 0; k <= lower[i]!.length; k++) for (const j of byPrefix.get(`~${lower[i]!.slice(0, k)}`) ?? []) if (j < i) candidates.push(j);
    candidates.sort((a, b) => a - b);
    const w = candidates.find((j) => covers(routes[j]!, r));
    const winner = w === undefined ? undefined : routes[w];
    if (!winner) return;
    out.push({
      kind: 'route',
      name: r.name,
      pointer: '/pathPrefix',
      code: 'Compile.Route.Shadowed',
      message: `route ${winner.name} (order ${winner.order}, prefix ${JSON.stringify(winner.pathPrefix)}) wins every request this route matches: it never serves`,
    });
  });
  return out;
}

/** Whether every request `r` matches is matched by `s` too (hosts, methods, prefix and its case). */
export function covers(s: CompiledRoute, r: CompiledRoute): boolean {
  const prefix = s.caseSensitive ? r.caseSensitive && r.pathPrefix.startsWith(s.pathPrefix) : r.pathPrefix.toLowerCase().startsWith(s.pathPrefix.toLowerCase());
  if (!prefix) return false;
  const methods = s.methods === null || (r.methods !== null && r.methods.every((m) => s.methods!.includes(m)));
  return methods && (s.hosts === null || (r.hosts !== null && r.hosts.every((h) => s.hosts!.some((p) => coversHost(p, h)))));
}

function unusedClusters(routes: readonly CompiledRoute[], rows: readonly EntityRow[]): CompileIssue[] {
  const used = new Set<string>();
  for (const r of routes) {
    if (r.terminal.type !== 'cluster') continue;
    used.add(r.terminal.cluster.slice(r.terminal.cluster.indexOf('/') + 1));
    stepClusters(r.terminal.steps, used);
  }
  return rows
    .filter((e) => e.kind === 'cluster' && !used.has(e.name))
    .map((e) => ({ kind: 'cluster', name: e.name, pointer: '', code: 'Compile.Cluster.Unused' as const, message: 'no route sends traffic to this cluster (as its terminal, a traffic-split or a mirror)' }));
}

/** The cluster names step settings hold (traffic-split's `clusters[].cluster`, mirror's `cluster`), groups included. */
function stepClusters(steps: readonly CompiledStep[], into: Set<string>): void {
  const scan = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(scan);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'cluster' && typeof x === 'string') into.add(x);
        else scan(x);
      }
    }
  };
  for (const s of steps) {
    if (s.kind === 'step') scan(s.settings);
    else s.members.forEach((m) => stepClusters(m, into));
  }
}

/** Orch chains no route reaches, directly or through another chain. */
function unusedOrchs(rows: readonly EntityRow[]): CompileIssue[] {
  const refs = (steps: readonly { code?: string; step?: string; settings?: unknown }[] | undefined) =>
    (steps ?? []).filter((s) => (s.code ?? s.step) === 'orch').map((s) => (s.settings as { ref?: unknown } | undefined)?.ref).filter((x): x is string => typeof x === 'string');
  const chains = new Map(rows.filter((e) => e.kind === 'orch').map((e) => [e.name, refs((e.doc as OrchDoc).nodes)]));
  const reached = new Set<string>();
  const visit = (name: string) => {
    if (reached.has(name)) return;
    reached.add(name);
    for (const next of chains.get(name) ?? []) visit(next);
  };
  for (const e of rows) if (e.kind === 'route') refs((e.doc as RouteDoc).steps).forEach(visit);
  return [...chains.keys()]
    .filter((n) => !reached.has(n))
    .map((name) => ({ kind: 'orch', name, pointer: '', code: 'Compile.Orch.Unused' as const, message: 'no route runs this chain, directly or through another chain' }));
}

function ignoredSteps(rows: readonly EntityRow[]): CompileIssue[] {
  return rows
    .filter((e) => e.kind === 'route' && (e.doc as RouteDoc).cluster === undefined && ((e.doc as RouteDoc).steps ?? []).length > 0)
    .map((e) => ({ kind: 'route', name: e.name, pointer: '/steps', code: 'Compile.Route.StepsIgnored' as const, message: 'only a cluster route runs steps: this route answers by itself, and its steps never run' }));
}
