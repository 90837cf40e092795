import { discoveryIssues, discoverySources, fixedTargets, tenantDiscoveryIssues } from './cluster-discovery.js';
import { compileCluster, targetAddress } from './compile-cluster.js';
import { keySources, usedCodes } from './route-steps.js';
import { parseDocument, type CertDoc, type ClusterDoc, type OrchDoc, type RouteDoc } from './documents.js';
import { compileCerts, type CertChecks, type TenantCert } from './compile-certs.js';
import { certHostWarnings, clientCertWarnings, compileServerTls } from './compile-tls.js';
import { CONNECTION_DEFAULTS, REQUEST_BUFFERING_DEFAULT_BYTES, WEBSOCKET_DEFAULTS } from '../contracts/generation.js';
import type { CompiledCluster, CompiledGeneration, CompiledRoute, CompiledTerminal, CompileIssue } from '../contracts/generation.js';
import { applyDrafts, type Snapshot } from './snapshot.js';
import type { EntityRow } from '../contracts/entities.js';
import { StepCompiler } from './step-compiler.js';
import { NO_SECRETS, type SecretPolicy } from '../contracts/secrets.js';
import { claimHosts, type HostClaim } from './host-claims.js';
import { caseVariantWarnings } from './case-variants.js';
import { impactWarnings } from './impact-warnings.js';
import { normalizePath } from '../shared/normalize-path.js';
import { TenantPartCache, type TenantPart } from './tenant-parts.js';
import { deniedTargets, deniedUrl } from './upstream-checks.js';
import { grpcRouteIssues } from './grpc-routes.js';
import { clusterTlsIssues, unverifiedTlsWarnings } from './cluster-tls.js';
import { clusterProtocolIssues, websocketProtocolIssues } from './cluster-protocol.js';
import { upstreamPolicy, type UpstreamCheck } from '../shared/upstream-policy.js';
import type { CompileIssueCode } from '../shared/errors.js';
import { BUILTINS } from '../steps/registry.js';
import type { StepRegistry } from '../steps/step-registry.js';

/** What the compiler is given besides the snapshot. */
export interface CompileOptions {
  /** The steps the gateway knows (built-ins and worker.json's packages); default: the built-ins. */
  steps?: StepRegistry;
}

export const DEFAULT_TENANT = 'default';

/**
 * `entities`: the state the candidate serves (published with the drafts applied), for the
 * publisher to store. `warnings`: about the publishing tenant's routes; they stop nothing.
 */
export type CompileResult =
  | { ok: true; generation: CompiledGeneration; planned: string[]; entities: EntityRow[]; issues: []; warnings: CompileIssue[] }
  | { ok: false; planned: string[]; entities: EntityRow[]; issues: CompileIssue[]; warnings: CompileIssue[] };

const TERMINALS = ['cluster', 'redirect', 'directResponse'] as const;

/**
 * Pure: (published state + one tenant's drafts) -> a generation every worker can load,
 * or the list of issues that stop it. No I/O, no clock, no randomness: the same
 * snapshot always compiles to the same result.
 */
export function compile(snapshot: Snapshot, cache?: TenantPartCache, options: CompileOptions = {}): CompileResult {
  const steps = options.steps ?? BUILTINS;
  const { entities, planned } = applyDrafts(snapshot);
  const byTenant = new Map<string, EntityRow[]>();
  for (const e of entities) {
    let list = byTenant.get(e.tenant);
    if (!list) byTenant.set(e.tenant, (list = []));
    list.push(e);
  }

  const issues: CompileIssue[] = [];
  const generation: CompiledGeneration = { format: 1, tenants: {}, hostOwners: {}, clusters: {} };
  const allRoutes: CompiledRoute[] = [];
  const claims: HostClaim[] = [];
  const certs = new Map<string, TenantCert[]>();
  let warnings: CompileIssue[] = [];
  const policy = snapshot.upstreams ? upstreamPolicy(snapshot.upstreams) : null;
  for (const [tenant, rows] of [...byTenant].sort(([a], [b]) => a.localeCompare(b))) {
    // The publishing tenant is compiled afresh with checks that count on its own publish
    // only (disabled steps, upstream addresses, secrets: a narrower worker.json must not
    // stop other tenants' publishes; workers refuse what it denies when they connect).
    // Those checks add issues and change nothing else, so its part, once without issues, is
    // what any other tenant's publish would compile: it is cached for them.
    const own = tenant === snapshot.tenant;
    // A part compiled against other package steps (a reload) is not reused.
    const key = cache ? `${TenantPartCache.key(rows)}|${steps.fingerprint}` : '';
    let part = own ? undefined : cache?.get(tenant, key);
    if (!part) {
      const checks = own ? { disabled: snapshot.disabled?.[tenant] ?? [], check: policy ? policy(tenant) : null, secrets: snapshot.secrets ?? NO_SECRETS, certs: snapshot.tls ?? null, redis: snapshot.redis ?? true } : null;
      part = compileTenant(tenant, rows, checks, steps);
      if (!own || part.issues.length === 0) cache?.set(tenant, key, part);
    }
    issues.push(...part.issues);
    Object.assign(generation.clusters, part.clusters);
    if (own) warnings = [...caseVariantWarnings(part.routes), ...impactWarnings(part.routes, rows), ...unverifiedTlsWarnings(part.clusters), ...part.warnings];
    generation.tenants[tenant] = { routes: part.routes };
    allRoutes.push(...part.routes);
    for (const r of part.routes) claims.push({ tenant, kind: 'route', name: r.name, hosts: r.hosts });
    // The default tenant (the operator) serves certificates for any name; another tenant's claim the names it covers.
    if (tenant !== DEFAULT_TENANT) for (const c of part.certs) claims.push({ tenant, kind: 'cert', name: c.name, hosts: c.hosts });
    certs.set(tenant, part.certs);
  }
  cache?.retain(new Set(byTenant.keys()));
  generation.hostOwners = claimHosts(claims, issues, snapshot.tenant);
  const tls = compileServerTls(certs, DEFAULT_TENANT);
  if (tls) generation.serverTls = tls;
  if (snapshot.tls?.listening) warnings.push(...certHostWarnings(generation.tenants[snapshot.tenant]?.routes ?? [], tls));
  if (snapshot.tls?.clientCertificates !== undefined) warnings.push(...clientCertWarnings(generation.tenants[snapshot.tenant]?.routes ?? [], snapshot.tls.clientCertificates));

  if (issues.length) return { ok: false, planned, entities, issues, warnings };
  // Which build of each package step the routes use: a worker that loaded another refuses them.
  const builds = steps.buildsOf(usedCodes(allRoutes));
  if (builds) generation.stepBuilds = builds;
  const sources = keySources(allRoutes, steps);
  if (sources.length) generation.keySources = sources;
  const names = discoverySources(generation.clusters);
  if (names.length) generation.discoverySources = names;
  return { ok: true, generation, planned, entities, issues: [], warnings };
}

/** One tenant's clusters and ranked routes, and the issues of its documents and steps. */
function compileTenant(
  tenant: string,
  entities: readonly EntityRow[],
  /** The publishing tenant's checks (its disabled steps, upstream addresses, the secrets it may name); null for the others. */
  own: { disabled: readonly string[]; check: UpstreamCheck | null; secrets: SecretPolicy; certs: CertChecks | null; redis: boolean } | null,
  registry: StepRegistry,
): TenantPart {
  const issues: CompileIssue[] = [];
  const rows: EntityRow[] = [];
  for (const e of entities) {
    const parsed = parseDocument(e.kind, e.doc);
    if (!parsed.ok) {
      for (const f of parsed.errors) issues.push({ kind: e.kind, name: e.name, pointer: f.path, code: 'Compile.Document', message: f.message });
      continue;
    }
    rows.push({ ...e, doc: parsed.doc });
  }
  const of = <T>(kind: string) => new Map(rows.filter((r) => r.kind === kind).map((r) => [r.name, r.doc as T]));
  const clusters = of<ClusterDoc>('cluster');
  const certDocs = of<CertDoc>('cert');
  const compiledClusters: Record<string, CompiledCluster> = {};
  for (const [name, c] of clusters) {
    compiledClusters[`${tenant}/${name}`] = compileCluster(tenant, `${tenant}/${name}`, c, certDocs);
    if ((c.balance === 'hash') !== (c.hashOn !== undefined)) {
      issues.push({ kind: 'cluster', name, pointer: '/hashOn', code: 'Compile.Document', message: 'hashOn is required with balance "hash", and allowed only with it' });
    }
    clusterTlsIssues(tenant, name, c, certDocs, own ? own.secrets : null, issues);
    clusterProtocolIssues(name, c, issues);
    discoveryIssues(name, c, issues);
  }
  tenantDiscoveryIssues(clusters, issues);
  const check = own?.check ?? null;
  if (check) for (const [name, c] of clusters) deniedTargets(name, fixedTargets(c).map((t) => ({ address: targetAddress(t.target), index: t.index })), check, issues);
  const urlDenied = check ? (url: string) => deniedUrl(url, check) : undefined;
  const warnings: CompileIssue[] = [];
  const steps = new StepCompiler(tenant, new Set(clusters.keys()), of<OrchDoc>('orch'), issues, warnings, new Set(own?.disabled ?? []), own ? own.secrets : null, urlDenied, own?.redis ?? true, registry, own !== null);
  steps.checkChains();
  const routes: CompiledRoute[] = [];
  for (const [name, doc] of of<RouteDoc>('route')) {
    const r = compileRoute(tenant, name, doc, clusters, steps, issues);
    if (r) routes.push(r);
  }
  warnings.push(...steps.chainWarnings());
  rank(routes);
  const certs = compileCerts(tenant, certDocs, own?.certs ?? null, issues, warnings);
  return { clusters: compiledClusters, routes, issues, certs, warnings };
}

export { CONNECTION_DEFAULTS, REQUEST_BUFFERING_DEFAULT_BYTES };

function compileRoute(
  tenant: string,
  name: string,
  doc: RouteDoc,
  clusters: ReadonlyMap<string, ClusterDoc>,
  steps: StepCompiler,
  issues: CompileIssue[],
): CompiledRoute | null {
  const issue = (pointer: string, code: CompileIssueCode, message: string) => issues.push({ kind: 'route', name, pointer, code, message });
  const terminals = TERMINALS.filter((t) => doc[t] !== undefined);
  if (terminals.length !== 1) {
    issue('', 'Compile.Route.Terminal', terminals.length === 0
      ? 'a route needs exactly one terminal: cluster, redirect or directResponse'
      : `a route has exactly one terminal; this one has ${terminals.join(' and ')}`);
  }
  if (tenant !== DEFAULT_TENANT && !doc.hosts?.length) {
    issue('/hosts', 'Compile.Route.Hosts', `routes of tenant ${tenant} must declare hosts, so they cannot capture another tenant's traffic`);
  }
  if (doc.pathPrefix !== undefined) checkPrefix(doc.pathPrefix, issue);
  if (doc.websocket && doc.cluster === undefined) issue('/websocket', 'Compile.Route.Terminal', 'websocket needs a cluster terminal: only a cluster route proxies WebSockets');
  // Steps are checked on every route, but only a cluster route runs them.
  const compiledSteps = steps.compile(doc.steps ?? [], { kind: 'route', name }, '/steps', `${tenant}/${name}#`, doc.cluster !== undefined);
  if (doc.grpc) {
    if (doc.cluster === undefined) issue('/grpc', 'Compile.Route.Grpc', 'grpc needs a cluster terminal: only a cluster route carries gRPC calls');
    grpcRouteIssues(doc, clusters, compiledSteps, (pointer, message) => issue(pointer, 'Compile.Route.Grpc', message));
  }
  let terminal: CompiledTerminal | null = null;
  if (terminals.length === 1) {
    if (doc.cluster !== undefined) {
      if (!clusters.has(doc.cluster)) issue('/cluster', 'Compile.Route.Cluster', `no cluster ${doc.cluster} in tenant ${tenant}`);
      else if (compiledSteps) {
        // A gRPC call's body streams for the call's life: never read ahead.
        const bufferBytes = doc.grpc ? 0 : (doc.requestBuffering?.maxBytes ?? clusters.get(doc.cluster)!.requestBuffering?.maxBytes ?? REQUEST_BUFFERING_DEFAULT_BYTES);
        const websocket = doc.websocket ? { ...WEBSOCKET_DEFAULTS, ...(doc.websocket === true ? {} : doc.websocket) } : undefined;
        websocketProtocolIssues(name, doc, compiledSteps, clusters, issues);
        const grpc = doc.grpc ? { web: doc.grpc !== true && doc.grpc.web } : undefined;
        terminal = { type: 'cluster', cluster: `${tenant}/${doc.cluster}`, steps: compiledSteps, bufferBytes, ...(websocket && { websocket }), ...(grpc && { grpc }) };
      }
    } else if (doc.redirect) {
      terminal = { type: 'redirect', location: doc.redirect.location, statusCode: doc.redirect.statusCode ?? 302 };
    } else if (doc.directResponse) {
      const d = doc.directResponse;
      const headers = Object.fromEntries(Object.entries(d.headers ?? {}).map(([k, val]) => [k.toLowerCase(), val]));
      headers['content-type'] ??= 'text/plain; charset=utf-8';
      terminal = { type: 'directResponse', statusCode: d.statusCode, body: d.body, headers };
    }
  }
  if (!terminal) return null;
  return {
    id: `${tenant}/${name}`,
    tenant,
    name,
    order: doc.order ?? 0,
    pathPrefix: doc.pathPrefix ?? '',
    hosts: doc.hosts?.length ? doc.hosts.map((h) => h.toLowerCase()) : null,
    methods: doc.methods?.length ? doc.methods : null,
    caseSensitive: doc.caseSensitive ?? true,
    ...(doc.tls ? { tls: doc.tls } : {}),
    rank: 0,
    terminal,
  };
}

/**
 * A prefix is compared with the normalised request path, so it must be normal itself:
 * refused rather than normalised, so the document says what is matched.
 */
function checkPrefix(prefix: string, issue: (pointer: string, code: CompileIssueCode, message: string) => void): void {
  const normal = normalizePath(prefix);
  if (normal === null) {
    issue('/pathPrefix', 'Compile.Route.PathPrefix', `pathPrefix ${JSON.stringify(prefix)} holds what the data port refuses in a path (an encoded slash or backslash, %00, a malformed or non-UTF-8 percent-encoding, a control character or #): no request could match it`);
  } else if (normal !== prefix) {
    issue('/pathPrefix', 'Compile.Route.PathPrefix', `pathPrefix ${JSON.stringify(prefix)} is not in the normal form requests are matched in; write ${JSON.stringify(normal)}`);
  }
}

/** Highest order first; ties: longer prefix first, then name. */
function rank(routes: CompiledRoute[]): void {
  routes.sort((a, b) => b.order - a.order || b.pathPrefix.length - a.pathPrefix.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  routes.forEach((r, i) => (r.rank = i));
}
