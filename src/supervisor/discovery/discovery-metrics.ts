import type { DiscoverySource, DiscoveryState } from '../../contracts/discovery.js';
import type { Exposition } from '../../shared/metrics-exposition.js';

const RESULTS = ['ok', 'error'] as const;
type Result = (typeof RESULTS)[number];
const STATES: readonly DiscoveryState[] = ['pending', 'ok', 'fail-static'];

/**
 * The discovery families: resolutions by result (counted since the name was first served;
 * a name several targets of a tenant write is asked once, and each target shows its count),
 * and each target's addresses and state now.
 */
export class DiscoveryMetrics {
  write(out: Exposition, targets: readonly { spec: DiscoverySource; state: DiscoveryState; addresses: number; counts: Record<Result, number> }[]): void {
    // One series per cluster, name and type: a cluster writing one name with two ports shares its resolutions and sums its addresses.
    const byLabels = new Map<string, (typeof targets)[number]>();
    for (const t of targets) {
      const k = `${t.spec.tenant}/${t.spec.cluster}|${t.spec.type}|${t.spec.name}`;
      const have = byLabels.get(k);
      byLabels.set(k, have ? { ...have, addresses: have.addresses + t.addresses } : t);
    }
    const names = [...byLabels.values()];
    const labels = (s: DiscoverySource) => ({ tenant: s.tenant, cluster: s.cluster, name: s.name, type: s.type });
    out.family('switchyard_discovery_resolutions_total', 'counter', 'DNS resolutions of a cluster target name by the supervisor, by result: ok, error (NXDOMAIN, no records, timeout, server failure).');
    for (const n of names) for (const r of RESULTS) out.sample('switchyard_discovery_resolutions_total', { ...labels(n.spec), result: r }, n.counts[r]);
    out.family('switchyard_discovery_addresses', 'gauge', 'Addresses a DNS name gives its cluster now (after the upstream allow-list).');
    for (const n of names) out.sample('switchyard_discovery_addresses', labels(n.spec), n.addresses);
    out.family('switchyard_discovery_state', 'gauge', "A DNS name's state (1 for the current one): pending (never resolved), ok, fail-static (the last resolution failed; the last addresses serve).");
    for (const n of names) for (const st of STATES) out.sample('switchyard_discovery_state', { ...labels(n.spec), state: st }, n.state === st ? 1 : 0);
  }
}
