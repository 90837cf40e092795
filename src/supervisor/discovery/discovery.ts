import type { CompiledCluster, CompiledGeneration } from '../../contracts/generation.js';
import type { DiscoveredAddress, DiscoverySet, DiscoverySource, DiscoveryStatus } from '../../contracts/discovery.js';
import type { ToWorker } from '../../contracts/ipc.js';
import type { Logger } from '../../shared/logger.js';
import type { Exposition } from '../../shared/metrics-exposition.js';
import type { UpstreamGuard } from '../../shared/upstream-guard.js';
import { expandCluster, expandGeneration } from '../../shared/discovery-targets.js';
import { queryDns, type Answer, type DnsClient, type DnsQuestion } from './dns-query.js';
import { addressDiff, sameAddresses, sortedAddresses } from './address-set.js';
import { selectAddresses } from './address-order.js';
import { DiscoveryMetrics } from './discovery-metrics.js';
import { DnsName } from './dns-name.js';
import { sourceStatus } from './discovery-status.js';
import type { Source } from './discovery-source.js';

export interface DiscoveryOptions {
  resolver: DnsClient;
  /** Every address is checked against the tenant's upstream policy (worker.json `upstreams`). */
  guard: UpstreamGuard;
  /** To every worker with a process (starting ones included). */
  pushAll: (msg: ToWorker) => void;
  /** The served generation with its DNS clusters expanded, whenever its addresses change (health checks, outlier ejection and the metrics' series follow it). */
  expanded: (gen: CompiledGeneration | null) => void;
  log: Logger;
  /** The DNS query (tests replace it). */
  query?: (resolver: DnsClient, q: DnsQuestion, accept: (ip: string, port: number) => boolean) => Promise<Answer>;
}

const nameKey = (s: DiscoverySource): string => `${s.tenant}|${s.type}|${s.name}`;

/** How long a name no served generation lists keeps its last answer: a publish that names it again within it (a cluster moved to fixed targets and back, a rollback) serves at once. */
export const DISCOVERY_KEEP_STOPPED_MS = 60_000;

/** How long a start waits for its DNS targets' first answers (a resolution's own bound is 8 s). */
const START_WAIT_MS = 2_000;

/**
 * The node's DNS discovery: each name+type a tenant's
 * served clusters write resolved here once for the node (dns-name.ts), never per worker or
 * per cluster; each source (a cluster's target: the name with its port) takes the answer
 * through the tenant's upstream policy and the address cap, and a changed set is pushed to
 * every worker (`discovery`; init carries all). A publish that keeps a name (another port,
 * a renamed cluster) derives the new sources from its last good answer at once. Sets of
 * sources a publish drops are not withdrawn here: each worker drops them when it swaps to
 * a generation that no longer names them (the one it serves until then still does).
 */
export class Discovery {
  private readonly names = new Map<string, DnsName>();
  /** Names stopped within DISCOVERY_KEEP_STOPPED_MS, with their last answer. */
  private readonly stopped = new Map<string, DnsName>();
  private readonly sources = new Map<string, Source>();
  private gen: CompiledGeneration | null = null;
  private version = 0;
  private readonly metrics = new DiscoveryMetrics();
  private readonly query: NonNullable<DiscoveryOptions['query']>;

  constructor(private readonly o: DiscoveryOptions) {
    this.query = o.query ?? queryDns;
  }

  readonly get = (source: string): readonly DiscoveredAddress[] | undefined => this.sources.get(source)?.addresses;

  /** The generation served now: new names are resolved at once, the ones it no longer lists stop. */
  serve(gen: CompiledGeneration | null): void {
    this.gen = gen;
    const specs = gen?.discoverySources ?? [];
    const listed = new Set(specs.map((s) => s.id));
    for (const id of this.sources.keys()) if (!listed.has(id)) this.sources.delete(id);
    const refresh = new Map<string, number | undefined>();
    const started: DnsName[] = [];
    const derived: DiscoverySet[] = [];
    for (const spec of specs) {
      const key = nameKey(spec);
      const written = refresh.has(key) ? min(refresh.get(key), spec.refreshSeconds) : spec.refreshSeconds;
      refresh.set(key, written);
      let name = this.names.get(key);
      if (!name) {
        name = this.stopped.get(key) ?? this.newName(spec, written);
        this.stopped.delete(key);
        this.names.set(key, name);
        started.push(name);
      }
      const have = this.sources.get(spec.id);
      if (have) {
        have.spec = spec;
        continue;
      }
      const source: Source = { spec, name, addresses: [], refused: [], version: 0 };
      this.sources.set(spec.id, source);
      // The name is known already (another port, another cluster, a renamed one): its last good answer serves at once.
      if (name.answer && this.derive(source)) derived.push(setOf(source));
    }
    for (const [key, name] of this.names) {
      if (!refresh.has(key)) {
        name.stop();
        this.names.delete(key);
        this.stopped.set(key, name);
      } else name.setRefresh(refresh.get(key));
    }
    for (const [key, name] of this.stopped) if (Date.now() - name.stoppedAt! > DISCOVERY_KEEP_STOPPED_MS) this.stopped.delete(key);
    if (derived.length) this.o.pushAll({ type: 'discovery', sets: derived });
    for (const name of started) name.start();
    this.o.expanded(this.expand(gen));
  }

  /**
   * Resolves once every name has had its first answer (or failure), or after `boundMs`: at start,
   * so workers listen with the addresses instead of answering 503 NoTargets for a round trip.
   */
  async settled(boundMs = START_WAIT_MS): Promise<void> {
    const until = Date.now() + boundMs;
    while (Date.now() < until && [...this.names.values()].some((n) => n.lastAt === null)) await new Promise((r) => setTimeout(r, 10));
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

  /** Every source's set (what a starting worker gets with init). */
  sets(): DiscoverySet[] {
    return [...this.sources.values()].map(setOf);
  }

  /** The DNS targets of cluster `clusterKey` (`tenant/name`) with their name's last resolution (discovery-status.ts). */
  status(clusterKey: string): DiscoveryStatus[] {
    return [...this.sources.values()].filter((s) => `${s.spec.tenant}/${s.spec.cluster}` === clusterKey).map(sourceStatus);
  }

  /** switchyard_discovery_resolutions_total, switchyard_discovery_addresses, switchyard_discovery_state. */
  write(out: Exposition): void {
    this.metrics.write(out, [...this.sources.values()].map((s) => ({ spec: s.spec, state: s.name.state, addresses: s.addresses.length, counts: s.name.counts })));
  }

  stop(): void {
    for (const n of this.names.values()) n.stop();
  }

  private newName(spec: DiscoverySource, refresh: number | undefined): DnsName {
    const { tenant, name, type } = spec;
    const accept = (ip: string, port: number) => this.o.guard.refusal(tenant, ip, port) === null;
    const dnsName: DnsName = new DnsName(tenant, name, type, refresh, {
      query: () => this.query(this.o.resolver, { name, type }, accept),
      answered: () => this.answered(dnsName),
      clusters: () => [...new Set(this.sourcesOf(dnsName).map((s) => s.spec.cluster))],
      log: this.o.log,
    });
    return dnsName;
  }

  private sourcesOf(name: DnsName): Source[] {
    return [...this.sources.values()].filter((s) => s.name === name);
  }

  /** A good answer: every source of the name takes it; the sets that changed go to the workers in one message. */
  private answered(name: DnsName): void {
    const changed = this.sourcesOf(name).filter((s) => this.derive(s));
    if (!changed.length) return;
    this.o.pushAll({ type: 'discovery', sets: changed.map(setOf) });
    if (this.gen) this.o.expanded(this.expand(this.gen));
  }

  /** The source's set from its name's last good answer; true when it changed (or is the first). */
  private derive(s: Source): boolean {
    const { tenant, cluster, name, type } = s.spec;
    const { allowed, refused } = selectAddresses(s.name.answer?.addresses ?? [], s.spec.port, (ip, port) => this.o.guard.refusal(tenant, ip, port));
    // Each refused address is logged when it first appears in an answer, not at every refresh; only the node log names it.
    const before = new Set(s.refused.map((r) => r.address));
    for (const r of refused) if (!before.has(r.address)) this.o.log.warn({ tenant, cluster, name, address: r.address, rule: r.rule }, 'DNS discovery: a resolved address is refused by the upstream policy; not used');
    s.refused = refused;
    const next = sortedAddresses(allowed);
    if (s.version !== 0 && sameAddresses(s.addresses, next)) return false;
    const { added, removed } = addressDiff(s.addresses, next);
    s.addresses = next;
    s.version = ++this.version;
    this.o.log.info({ tenant, cluster, name, type, added, removed, addresses: next.map((a) => a.hostPort) }, 'DNS discovery: the addresses changed');
    return true;
  }
}

const setOf = (s: Source): DiscoverySet => ({ id: s.spec.id, version: s.version, addresses: s.addresses });
const min = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : Math.min(a, b));
