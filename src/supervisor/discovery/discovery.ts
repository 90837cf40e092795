import type { Resolver } from 'node:dns/promises';
import type { CompiledCluster, CompiledGeneration } from '../../contracts/generation.js';
import type { DiscoveredAddress, DiscoverySet, DiscoverySource, DiscoveryState, DiscoveryStatus } from '../../contracts/discovery.js';
import type { ToWorker } from '../../contracts/ipc.js';
import type { Logger } from '../../shared/logger.js';
import type { Exposition } from '../../shared/metrics-exposition.js';
import type { UpstreamGuard } from '../../shared/upstream-guard.js';
import { expandCluster, expandGeneration } from '../../shared/discovery-targets.js';
import { answeredHostPort, queryDns, type Answer } from './dns-query.js';
import { refreshSeconds, retrySeconds } from './refresh-delay.js';
import { addressDiff, sameAddresses, sortedAddresses } from './address-set.js';
import { DiscoveryMetrics } from './discovery-metrics.js';

/** What a name is, between resolutions. */
interface Name {
  spec: DiscoverySource;
  state: DiscoveryState;
  /** What the workers use: the last good answer's addresses the upstream policy allowed. */
  addresses: DiscoveredAddress[];
  refused: { address: string; rule: string }[];
  version: number;
  lastAt: number | null;
  lastResult: string | null;
  nextAt: number | null;
  timer: NodeJS.Timeout | null;
  /** The last failure's code logged (null: the last resolution succeeded): one line per transition. */
  failing: string | null;
  stopped: boolean;
}

export interface DiscoveryOptions {
  resolver: Resolver;
  /** Every address is checked against the tenant's upstream policy (worker.json `upstreams`). */
  guard: UpstreamGuard;
  /** To every worker with a process (starting ones included). */
  pushAll: (msg: ToWorker) => void;
  /** The served generation with its DNS clusters expanded, whenever its addresses change (the health checks and outlier ejection follow it). */
  expanded: (gen: CompiledGeneration | null) => void;
  log: Logger;
  /** The DNS query (tests replace it). */
  query?: (resolver: Resolver, s: DiscoverySource) => Promise<Answer>;
}

/**
 * The node's DNS discovery (docs/design.md "DNS discovery"): each name the served generation
 * lists (`discoverySources`) resolved here once for the node, never per worker, again after
 * its refreshSeconds or its records' TTL (refresh-delay.ts), each address checked against the
 * tenant's upstream policy, and a changed set pushed to every worker (`discovery`; init
 * carries all). A name that stops resolving keeps its last good set (fail static) and is
 * asked again every few seconds; each transition is logged once.
 */
export class Discovery {
  private readonly names = new Map<string, Name>();
  private gen: CompiledGeneration | null = null;
  private version = 0;
  private readonly metrics = new DiscoveryMetrics();
  private readonly query: (resolver: Resolver, s: DiscoverySource) => Promise<Answer>;

  constructor(private readonly o: DiscoveryOptions) {
    this.query = o.query ?? queryDns;
  }

  readonly get = (source: string): readonly DiscoveredAddress[] | undefined => this.names.get(source)?.addresses;

  /** The generation served now: new names are resolved at once, the ones it no longer lists go. */
  serve(gen: CompiledGeneration | null): void {
    this.gen = gen;
    const specs = gen?.discoverySources ?? [];
    const listed = new Set(specs.map((s) => s.id));
    const dropped: string[] = [];
    for (const [id, n] of this.names) {
      if (listed.has(id)) continue;
      this.clear(n);
      n.stopped = true;
      this.names.delete(id);
      this.metrics.forget(id);
      dropped.push(id);
    }
    if (dropped.length) this.o.pushAll({ type: 'discovery', sets: [], dropped });
    for (const spec of specs) {
      const have = this.names.get(spec.id);
      if (have) {
        have.spec = spec;
        continue;
      }
      const n: Name = { spec, state: 'pending', addresses: [], refused: [], version: 0, lastAt: null, lastResult: null, nextAt: null, timer: null, failing: null, stopped: false };
      this.names.set(spec.id, n);
      void this.resolve(n);
    }
    this.o.expanded(this.expand(gen));
  }

  /** `gen` with its DNS clusters' addresses added. */
  expand(gen: CompiledGeneration): CompiledGeneration;
  expand(gen: CompiledGeneration | null): CompiledGeneration | null;
  expand(gen: CompiledGeneration | null): CompiledGeneration | null {
    return gen && expandGeneration(gen, this.get);
  }

  /** A cluster with its DNS addresses added (cluster health). */
  cluster(spec: CompiledCluster): CompiledCluster {
    return expandCluster(spec, this.get);
  }

  /** Every name's set (what a starting worker gets with init). */
  sets(): DiscoverySet[] {
    return [...this.names.values()].map(setOf);
  }

  /** The names of cluster `clusterKey` (`tenant/name`) with their last resolution. */
  status(clusterKey: string): DiscoveryStatus[] {
    const out: DiscoveryStatus[] = [];
    for (const n of this.names.values()) {
      if (`${n.spec.tenant}/${n.spec.cluster}` !== clusterKey) continue;
      out.push({
        name: n.spec.name,
        type: n.spec.type,
        port: n.spec.port ?? null,
        state: n.state,
        lastResolvedAt: iso(n.lastAt),
        lastResult: n.lastResult,
        addresses: n.addresses.map((a) => a.hostPort),
        refused: n.refused,
        nextAt: iso(n.nextAt),
      });
    }
    return out;
  }

  /** switchyard_discovery_resolutions_total, switchyard_discovery_addresses, switchyard_discovery_state. */
  write(out: Exposition): void {
    this.metrics.write(out, [...this.names.values()].map((n) => ({ spec: n.spec, state: n.state, addresses: n.addresses.length })));
  }

  stop(): void {
    for (const n of this.names.values()) {
      this.clear(n);
      n.stopped = true;
    }
  }

  private async resolve(n: Name): Promise<void> {
    n.timer = null;
    let answer: Answer;
    try {
      answer = await this.query(this.o.resolver, n.spec);
    } catch (err) {
      if (!n.stopped) this.failed(n, err as NodeJS.ErrnoException);
      return;
    }
    if (!n.stopped) this.answered(n, answer);
  }

  private answered(n: Name, answer: Answer): void {
    const { tenant, cluster, name } = n.spec;
    const allowed: DiscoveredAddress[] = [];
    const refused: { address: string; rule: string }[] = [];
    for (const a of answer.addresses) {
      const hostPort = answeredHostPort(a);
      const rule = this.o.guard.refusal(tenant, a.ip, a.port);
      if (rule !== null) refused.push({ address: hostPort, rule });
      else allowed.push({ hostPort, ...(a.weight !== undefined ? { weight: a.weight } : {}), ...(a.priority !== undefined ? { priority: a.priority } : {}) });
    }
    // Each refused address is logged when it first appears in an answer, not at every refresh.
    const before = new Set(n.refused.map((r) => r.address));
    for (const r of refused) if (!before.has(r.address)) this.o.log.warn({ tenant, cluster, name, address: r.address, rule: r.rule }, 'DNS discovery: a resolved address is refused by the upstream policy; not used');
    n.refused = refused;
    n.lastAt = Date.now();
    n.lastResult = 'ok';
    this.metrics.count(n.spec.id, 'ok');
    if (n.failing !== null && n.state === 'fail-static') this.o.log.info({ tenant, cluster, name }, 'DNS discovery: the name resolves again');
    n.failing = null;
    n.state = 'ok';
    const next = sortedAddresses(allowed);
    if (n.version === 0 || !sameAddresses(n.addresses, next)) {
      const { added, removed } = addressDiff(n.addresses, next);
      n.addresses = next;
      n.version = ++this.version;
      this.o.log.info({ tenant, cluster, name, type: n.spec.type, added, removed, addresses: next.map((a) => a.hostPort) }, 'DNS discovery: the addresses changed');
      this.o.pushAll({ type: 'discovery', sets: [setOf(n)] });
      if (this.gen) this.o.expanded(this.expand(this.gen));
    }
    this.schedule(n, refreshSeconds(n.spec.refreshSeconds, answer.ttls));
  }

  private failed(n: Name, err: NodeJS.ErrnoException): void {
    const { tenant, cluster, name } = n.spec;
    const code = err.code ?? err.message;
    n.lastAt = Date.now();
    n.lastResult = code;
    this.metrics.count(n.spec.id, 'error');
    if (n.state === 'ok') n.state = 'fail-static';
    if (n.failing === null) {
      const line = { tenant, cluster, name, type: n.spec.type, error: code, addresses: n.addresses.map((a) => a.hostPort) };
      if (n.state === 'fail-static') this.o.log.warn(line, 'DNS discovery: the name does not resolve; the last addresses keep serving (fail static)');
      else this.o.log.warn(line, 'DNS discovery: the name does not resolve yet; the cluster has no address from it (503 Svc.Data.NoTargets without others)');
    }
    n.failing = code;
    this.schedule(n, retrySeconds(n.spec.refreshSeconds));
  }

  private schedule(n: Name, seconds: number): void {
    this.clear(n);
    n.nextAt = Date.now() + seconds * 1000;
    n.timer = setTimeout(() => void this.resolve(n), seconds * 1000);
    n.timer.unref();
  }

  private clear(n: Name): void {
    if (n.timer) clearTimeout(n.timer);
    n.timer = null;
  }
}

const setOf = (n: Name): DiscoverySet => ({ id: n.spec.id, version: n.version, addresses: n.addresses });
const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());
