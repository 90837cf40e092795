import type { CompiledGeneration, CompiledRoute } from '../../contracts/generation.js';
import { RouteTable, routingHost } from '../../shared/route-table.js';
import { normalizePath, type PathPolicy } from '../../shared/normalize-path.js';
import { coversHost, prefixMatches } from '../../shared/route-match.js';
import { dryFlow } from './dry-flow.js';
import { stepVerdicts } from './step-verdicts.js';
import { upstreamPick } from './upstream-pick.js';
import type { Candidate } from '../../contracts/explain.js';
import type { StepRegistry } from '../../steps/step-registry.js';

export interface ExplainRequest {
  method: string;
  /** An absolute URL (its host is the Host header unless `headers.host` says otherwise) or a path. */
  url: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The client's address, for steps and hashing that read it; null: not given. */
  clientAddress: string | null;
}

/**
 * Which of the tenant's routes a request matches and why, as the data port decides it: the
 * path normalised by the same function, the winner found by the same RouteTable the workers
 * build; the other candidates, in rank order, each with the reason it lost. A host another
 * tenant owns is only reported as such: its routes are not this tenant's to see.
 */
export async function explainRoute(gen: CompiledGeneration, tenant: string, req: ExplainRequest, paths: PathPolicy, registry: StepRegistry) {
  const method = req.method.toUpperCase();
  const target = parseTarget(req.url);
  const host = routingHost(req.headers.host ?? target.host);
  const [rawPath, ...rest] = target.pathAndQuery.split('?');
  const query = rest.length > 0 ? rest.join('?') : null;
  const path = normalizePath(rawPath!, paths);
  if (path === null) return { method, host, path: null, refused: 'the path is refused before routing (400 Svc.Data.BadRequest): an escaped slash or an invalid escape', route: null, candidates: [] };
  const table = new RouteTable(gen, (r) => r);
  const owner = table.lookup(method, host, path);
  if (table.tenantOf(host) !== tenant) return { method, host, path, refused: `the host ${JSON.stringify(host)} belongs to another tenant`, route: null, candidates: [] };
  const routes = gen.tenants[tenant]?.routes ?? [];
  const candidates = routes.map((r) => candidate(r, method, host, path, owner));
  const route = owner && owner.tenant === tenant ? owner : null;
  const base = { method, host, path, candidates };
  if (!route) return { ...base, refused: 'no route matches: 404 Svc.Data.NoRoute', route: null };
  const t = route.terminal;
  const head = { name: route.name, order: route.order, pathPrefix: route.pathPrefix, ...(route.tls ? { tls: route.tls } : {}) };
  if (route.tls === 'required' && target.scheme === 'http') {
    return { ...base, refused: 'the route requires TLS: a request on the plain port is answered 308 to https', route: { ...head, terminal: { type: t.type } } };
  }
  if (t.type === 'redirect') return { ...base, refused: null, route: { ...head, terminal: { type: 'redirect', location: t.location, statusCode: t.statusCode } } };
  if (t.type === 'directResponse') return { ...base, refused: null, route: { ...head, terminal: { type: 'directResponse', statusCode: t.statusCode } } };
  const flow = dryFlow({ method, path, query, headers: req.headers, clientAddress: req.clientAddress });
  const { views, ended } = await stepVerdicts(t.steps, flow, tenant, req.clientAddress !== null, registry);
  const name = t.cluster.slice(t.cluster.indexOf('/') + 1);
  const terminal = { type: 'cluster', cluster: name, steps: views, ...(t.websocket ? { websocket: true } : {}) };
  const spec = gen.clusters[t.cluster];
  const upstream = ended || !spec ? null : upstreamPick(name, spec, flow, req.clientAddress !== null);
  return { ...base, refused: null, route: { ...head, terminal }, upstream };
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

/** `https://h:443/p?q` -> scheme, host and path; a bare `/p?q` has no host and is taken as http. */
function parseTarget(url: string): { scheme: 'http' | 'https'; host: string; pathAndQuery: string } {
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/i.exec(url);
  if (!m) return { scheme: 'http', host: '', pathAndQuery: url.split('#')[0] || '/' };
  const scheme = m[1]!.toLowerCase() === 'https' ? 'https' : 'http';
  return { scheme, host: m[2]!.replace(/^[^@]*@/, ''), pathAndQuery: m[3] || '/' };
}
