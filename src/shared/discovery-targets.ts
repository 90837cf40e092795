import type { CompiledCluster, CompiledGeneration } from '../contracts/generation.js';
import type { DiscoveredAddress } from '../contracts/discovery.js';

/**
 * A cluster's targets once its `{dns}` targets are expanded: the fixed targets as written,
 * then every address each name resolved to as a target of its own (`10.0.0.3:8080`, or
 * `https://10.0.0.3:8443`), so health checks, outlier ejection, balancing and metrics key
 * it as any target. Pure: the workers (their pools) and the supervisor (its probes and
 * ejections) expand the same generation with the same sets and get the same list.
 */

/** A source's addresses as last pushed (undefined: never resolved). */
export type DiscoveredSets = (source: string) => readonly DiscoveredAddress[] | undefined;

/** An SRV weight of 0 counts as 1: RFC 2782 gives such a target a small share, not none. */
export function srvWeight(w: number | undefined): number {
  return w === undefined ? 1 : Math.max(1, Math.round(w));
}

export function expandCluster(spec: CompiledCluster, sets: DiscoveredSets): CompiledCluster {
  if (!spec.discover) return spec;
  const targets = [...spec.targets];
  const weights = spec.weights ? [...spec.weights] : targets.map(() => 1);
  const priorities = spec.priorities ? [...spec.priorities] : targets.map(() => 0);
  const seen = new Set(targets);
  let serverName: string | undefined;
  for (const d of spec.discover) {
    if (d.scheme === 'https' && d.type !== 'SRV') serverName ??= d.name; // an https SRV target needs tls.serverName (cluster-discovery.ts)
    for (const a of sets(d.source) ?? []) {
      const t = d.scheme === 'https' ? `https://${a.hostPort}` : a.hostPort;
      // An address two names (or two records) give is one target: the first one's weight.
      if (seen.has(t)) continue;
      seen.add(t);
      targets.push(t);
      weights.push(d.type === 'SRV' ? srvWeight(a.weight) : (d.weight ?? 1));
      priorities.push(a.priority ?? 0);
    }
  }
  const out: CompiledCluster = { ...spec, targets };
  if (weights.some((w) => w !== 1)) out.weights = weights;
  else delete out.weights;
  if (priorities.some((p) => p !== 0)) out.priorities = priorities;
  else delete out.priorities;
  // An address carries no name: the certificate is checked against the A/AAAA name (cluster-discovery.ts allows one).
  if (serverName !== undefined && spec.tls?.serverName === undefined) out.tls = { ...(spec.tls ?? { verify: true }), serverName };
  return out;
}

/** The generation with every DNS cluster expanded (the supervisor's health checks and outlier ejection run on it). */
export function expandGeneration(gen: CompiledGeneration, sets: DiscoveredSets): CompiledGeneration {
  if (!gen.discoverySources?.length) return gen;
  const clusters: CompiledGeneration['clusters'] = {};
  for (const [k, c] of Object.entries(gen.clusters)) clusters[k] = expandCluster(c, sets);
  return { ...gen, clusters };
}
