import type { CompiledGeneration, CompiledRoute, CompiledStep } from '../../contracts/generation.js';
import { RouteTable, routingHost } from '../../shared/route-table.js';
import { normalizePath, type PathPolicy } from '../../shared/normalize-path.js';
import { coversHost, prefixMatches } from '../../shared/route-match.js';

export interface ExplainRequest {
  method: string;
  /** An absolute URL (its host is the Host header unless `headers.host` says otherwise) or a path. */
  url: string;
  headers: Record<string, string>;
}

export interface Candidate {
  route: string;
  order: number;
  pathPrefix: string;
  hosts: string[] | null;
  methods: string[] | null;
  /** `wins`, or why the route did not take the request. */
  outcome: 'wins' | 'path' | 'host' | 'method' | 'outranked';
  reason: string;
}

export interface StepView {
  code: string;
  failureStrategy: 'FailFast' | 'Continue';
  /** Group members run concurrently; their results merge by `merge`. */
  group?: { id: string; merge: string; members: StepView[][] };
}

/**
 * Which of the tenant's routes a request matches and why, as the data port decides it: the
 * path normalised by the same function, the winner found by the same RouteTable the workers
 * build; the other candidates, in rank order, each with the reason it lost. A host another
 * tenant owns is only reported as such: its routes are not this tenant's to see.
 */
export function explainRoute(gen: CompiledGeneration, tenant: string, req: ExplainRequest, paths: PathPolicy) {
  const method = req.method.toUpperCase();
  const target = parseTarget(req.url);
  const host = routingHost(req.headers.host ?? target.host);
  const path = normalizePath(target.pathAndQuery.split('?')[0]!, paths);
  if (path === null) return { method, host, path: null, refused: 'the path is refused before routing (400 Svc.Data.BadRequest): an escaped slash or an invalid escape', route: null, candidates: [] };
  const table = new RouteTable(gen, (r) => r);
  const owner = table.lookup(method, host, path);
  if (table.tenantOf(host) !== tenant) return { method, host, path, refused: `the host ${JSON.stringify(host)} belongs to another tenant`, route: null, candidates: [] };
  const routes = gen.tenants[tenant]?.routes ?? [];
  const candidates = routes.map((r) => candidate(r, method, host, path, owner));
  const route = owner && owner.tenant === tenant ? owner : null;
  return {
    method,
    host,
    path,
    refused: route ? null : 'no route matches: 404 Svc.Data.NoRoute',
    route: route ? summary(route) : null,
    candidates,
  };
}

function candidate(r: CompiledRoute, method: string, host: string, path: string, winner: CompiledRoute | null): Candidate {
  const base = { route: r.name, order: r.order, pathPrefix: r.pathPrefix, hosts: r.hosts, methods: r.methods };
  if (!prefixMatches(r, path)) return { ...base, outcome: 'path', reason: `the path does not start with ${JSON.stringify(r.pathPrefix)}${r.caseSensitive ? '' : ' (in any case)'}` };
  if (r.hosts !== null && !r.hosts.some((h) => coversHost(h, host))) {
    return { ...base, outcome: 'host', reason: `the host ${JSON.stringify(host)} is not among ${r.hosts.join(', ')}` };
  }
  if (r.methods !== null && !r.methods.includes(method)) return { ...base, outcome: 'method', reason: `${method} is not among ${r.methods.join(', ')}` };
  if (winner === r) return { ...base, outcome: 'wins', reason: 'the best-ranked route that matches (highest order, then longest prefix, then name)' };
  return { ...base, outcome: 'outranked', reason: `it matches, and route ${winner?.name ?? '?'} ranks before it` };
}

function summary(r: CompiledRoute) {
  const t = r.terminal;
  const terminal =
    t.type === 'cluster'
      ? { type: 'cluster', cluster: t.cluster.slice(t.cluster.indexOf('/') + 1), steps: steps(t.steps), ...(t.websocket ? { websocket: true } : {}) }
      : t.type === 'redirect'
        ? { type: 'redirect', location: t.location, statusCode: t.statusCode }
        : { type: 'directResponse', statusCode: t.statusCode };
  return { name: r.name, order: r.order, pathPrefix: r.pathPrefix, ...(r.tls ? { tls: r.tls } : {}), terminal };
}

function steps(list: readonly CompiledStep[]): StepView[] {
  return list.map((s) =>
    s.kind === 'step'
      ? { code: s.code, failureStrategy: s.continue ? 'Continue' : 'FailFast' }
      : { code: 'group', failureStrategy: 'FailFast', group: { id: s.id, merge: s.merge, members: s.members.map(steps) } },
  );
}

/** `https://h:443/p?q` -> host and path; a bare `/p?q` has no host. */
function parseTarget(url: string): { host: string; pathAndQuery: string } {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)([^#]*)/i.exec(url);
  if (!m) return { host: '', pathAndQuery: url.split('#')[0] || '/' };
  return { host: m[1]!.replace(/^[^@]*@/, ''), pathAndQuery: m[2] || '/' };
}
