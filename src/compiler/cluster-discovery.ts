import type { ClusterDoc } from './documents.js';
import { isDnsTarget } from './documents.js';
import type { CompiledCluster, CompileIssue } from '../contracts/generation.js';
import { DISCOVERY_MAX_TARGETS_PER_CLUSTER, DISCOVERY_MAX_TARGETS_PER_TENANT, discoverySourceId, type DiscoverySource, type DiscoveryTarget } from '../contracts/discovery.js';

/**
 * A cluster's `{dns}` targets (docs/reference.md "DNS targets"): what the compiled cluster
 * carries of them, and the names the supervisor resolves. The fixed targets stay in
 * `targets`; the addresses found are added by shared/discovery-targets.ts.
 */

type Target = ClusterDoc['targets'][number];
type FixedTarget = Exclude<Target, { dns: string }>;

/** The targets written as addresses (`host:port` or `{address, weight}`), with their index in the document. */
export function fixedTargets(c: ClusterDoc): { target: FixedTarget; index: number }[] {
  const out: { target: FixedTarget; index: number }[] = [];
  c.targets.forEach((t, index) => {
    if (!isDnsTarget(t)) out.push({ target: t, index });
  });
  return out;
}

export function discoverTargets(clusterKey: string, c: ClusterDoc): DiscoveryTarget[] {
  const out: DiscoveryTarget[] = [];
  for (const t of c.targets) {
    if (!isDnsTarget(t)) continue;
    out.push({
      source: discoverySourceId(clusterKey, t.type, t.dns, t.port),
      name: t.dns.toLowerCase(),
      type: t.type,
      scheme: t.scheme,
      ...(t.port !== undefined ? { port: t.port } : {}),
      ...(t.weight !== undefined && t.weight !== 1 ? { weight: t.weight } : {}),
      ...(t.refreshSeconds !== undefined ? { refreshSeconds: t.refreshSeconds } : {}),
    });
  }
  return out;
}

/** One source per id across the generation's clusters; a name written twice refreshes at the shorter of its refreshSeconds. */
export function discoverySources(clusters: Record<string, CompiledCluster>): DiscoverySource[] {
  const byId = new Map<string, DiscoverySource>();
  for (const [key, c] of Object.entries(clusters)) {
    for (const t of c.discover ?? []) {
      const have = byId.get(t.source);
      if (have) {
        if (t.refreshSeconds !== undefined) have.refreshSeconds = Math.min(have.refreshSeconds ?? t.refreshSeconds, t.refreshSeconds);
        continue;
      }
      const slash = key.indexOf('/');
      byId.set(t.source, {
        id: t.source,
        tenant: key.slice(0, slash),
        cluster: key.slice(slash + 1),
        name: t.name,
        type: t.type,
        ...(t.port !== undefined ? { port: t.port } : {}),
        ...(t.refreshSeconds !== undefined ? { refreshSeconds: t.refreshSeconds } : {}),
      });
    }
  }
  return [...byId.values()];
}

/** `{dns}` targets the cluster's other settings cannot serve, and one past DISCOVERY_MAX_TARGETS_PER_CLUSTER. */
export function discoveryIssues(name: string, c: ClusterDoc, issues: CompileIssue[]): void {
  let count = 0;
  c.targets.forEach((t, i) => {
    if (!isDnsTarget(t)) return;
    if (++count === DISCOVERY_MAX_TARGETS_PER_CLUSTER + 1) {
      issues.push({ kind: 'cluster', name, pointer: `/targets/${i}`, code: 'Compile.Cluster.Discovery', message: `a cluster may have at most ${DISCOVERY_MAX_TARGETS_PER_CLUSTER} DNS targets` });
    }
    const issue = (pointer: string, message: string) => issues.push({ kind: 'cluster', name, pointer: `/targets/${i}${pointer}`, code: 'Compile.Cluster.Protocol', message });
    if (c.protocol === 'h2' && t.scheme !== 'https') issue('/scheme', 'protocol h2 is HTTP/2 over TLS: this DNS target needs scheme "https"');
    if (c.protocol === 'h2c' && t.scheme === 'https') issue('/scheme', 'protocol h2c is HTTP/2 without TLS: an https DNS target needs protocol h2');
  });
  if (c.tls?.serverName !== undefined) return;
  if (c.targets.some((t) => isDnsTarget(t) && t.type === 'SRV' && t.scheme === 'https')) {
    issues.push({ kind: 'cluster', name, pointer: '/tls/serverName', code: 'Compile.Cluster.Discovery', message: 'an https SRV target needs tls.serverName: its records name hosts of their own, so no one name checks the certificates' });
  }
  const https = new Set(c.targets.flatMap((t) => (isDnsTarget(t) && t.scheme === 'https' && t.type !== 'SRV' ? [t.dns.toLowerCase()] : [])));
  if (https.size > 1) {
    issues.push({ kind: 'cluster', name, pointer: '/tls/serverName', code: 'Compile.Cluster.Discovery', message: `the https DNS targets name ${[...https].join(', ')}: one certificate name is checked per cluster, set tls.serverName` });
  }
}

/** The DNS target past DISCOVERY_MAX_TARGETS_PER_TENANT across the tenant's clusters (by cluster name, then target): each name is a standing query of the node's. */
export function tenantDiscoveryIssues(clusters: ReadonlyMap<string, ClusterDoc>, issues: CompileIssue[]): void {
  let count = 0;
  for (const name of [...clusters.keys()].sort()) {
    const c = clusters.get(name)!;
    for (let i = 0; i < c.targets.length; i++) {
      if (!isDnsTarget(c.targets[i]!)) continue;
      if (++count > DISCOVERY_MAX_TARGETS_PER_TENANT) {
        issues.push({ kind: 'cluster', name, pointer: `/targets/${i}`, code: 'Compile.Cluster.Discovery', message: `a tenant's clusters may have at most ${DISCOVERY_MAX_TARGETS_PER_TENANT} DNS targets together` });
        return;
      }
    }
  }
}
