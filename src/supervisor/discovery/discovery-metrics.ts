import type { DiscoverySource, DiscoveryState } from '../../contracts/discovery.js';
import type { Exposition } from '../../shared/metrics-exposition.js';

const RESULTS = ['ok', 'error'] as const;
type Result = (typeof RESULTS)[number];
const STATES: readonly DiscoveryState[] = ['pending', 'ok', 'fail-static'];

/** The discovery families: resolutions by result (counted since the supervisor started), and each name's addresses and state now. */
export class DiscoveryMetrics {
  private readonly counts = new Map<string, Record<Result, number>>();

  count(id: string, result: Result): void {
    let c = this.counts.get(id);
    if (!c) this.counts.set(id, (c = { ok: 0, error: 0 }));
    c[result]++;
  }

  forget(id: string): void {
    this.counts.delete(id);
  }

  write(out: Exposition, names: readonly { spec: DiscoverySource; state: DiscoveryState; addresses: number }[]): void {
    const labels = (s: DiscoverySource) => ({ tenant: s.tenant, cluster: s.cluster, name: s.name, type: s.type });
    out.family('switchyard_discovery_resolutions_total', 'counter', 'DNS resolutions of a cluster target name by the supervisor, by result: ok, error (NXDOMAIN, no records, timeout, server failure).');
    for (const n of names) for (const r of RESULTS) out.sample('switchyard_discovery_resolutions_total', { ...labels(n.spec), result: r }, this.counts.get(n.spec.id)?.[r] ?? 0);
    out.family('switchyard_discovery_addresses', 'gauge', 'Addresses a DNS name gives its cluster now (after the upstream allow-list).');
    for (const n of names) out.sample('switchyard_discovery_addresses', labels(n.spec), n.addresses);
    out.family('switchyard_discovery_state', 'gauge', "A DNS name's state (1 for the current one): pending (never resolved), ok, fail-static (the last resolution failed; the last addresses serve).");
    for (const n of names) for (const st of STATES) out.sample('switchyard_discovery_state', { ...labels(n.spec), state: st }, n.state === st ? 1 : 0);
  }
}
