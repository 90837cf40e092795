import { isDnsTarget, type ClusterDoc, type RouteDoc } from './documents.js';
import type { CompiledStep, CompileIssue } from '../contracts/generation.js';
import { targetParts } from '../shared/target-url.js';

/**
 * A cluster's `protocol` checked against its targets, and the routes that could not use
 * it: `h2` is HTTP/2 over TLS (ALPN h2), so every target is `https://`; `h2c` is HTTP/2
 * with prior knowledge on plain connections, so none is. A WebSocket route's upgrade is
 * HTTP/1.1 to the upstream: its cluster, and any a `traffic-split` step of it may choose,
 * must not be h2 or h2c (WebSocket over HTTP/2 upstreams, RFC 8441, is not built).
 */

type Protocol = NonNullable<ClusterDoc['protocol']>;

export const isH2 = (p: Protocol | undefined): boolean => p === 'h2' || p === 'h2c';

export function clusterProtocolIssues(name: string, c: ClusterDoc, issues: CompileIssue[]): void {
  if (!isH2(c.protocol)) {
    if (c.timeouts?.pingMs !== undefined) issues.push({ kind: 'cluster', name, pointer: '/timeouts/pingMs', code: 'Compile.Cluster.Protocol', message: 'pingMs is for HTTP/2 connections: it needs protocol h2 or h2c' });
    return;
  }
  c.targets.forEach((t, i) => {
    if (isDnsTarget(t)) return; // cluster-discovery.ts
    const address = typeof t === 'string' ? t : t.address;
    const secure = targetParts(address).secure;
    const pointer = typeof t === 'string' ? `/targets/${i}` : `/targets/${i}/address`;
    if (c.protocol === 'h2' && !secure) {
      issues.push({ kind: 'cluster', name, pointer, code: 'Compile.Cluster.Protocol', message: `protocol h2 is HTTP/2 over TLS: write this target https://${targetParts(address).hostPort}, or use protocol h2c for HTTP/2 without TLS` });
    } else if (c.protocol === 'h2c' && secure) {
      issues.push({ kind: 'cluster', name, pointer, code: 'Compile.Cluster.Protocol', message: 'protocol h2c is HTTP/2 without TLS: an https:// target needs protocol h2' });
    }
  });
}

/** The clusters a route's steps may send it to instead of its own (traffic-split), groups and chains included. */
export function splitClusters(steps: readonly CompiledStep[], out: Set<string> = new Set()): Set<string> {
  for (const s of steps) {
    if (s.kind === 'group') for (const m of s.members) splitClusters(m, out);
    else if (s.code === 'traffic-split') for (const c of (s.settings as { clusters: { cluster: string }[] }).clusters) out.add(c.cluster);
  }
  return out;
}

/** A route with `websocket` whose cluster (or a traffic-split choice) speaks HTTP/2 upstream. */
export function websocketProtocolIssues(name: string, doc: RouteDoc, steps: readonly CompiledStep[], clusters: ReadonlyMap<string, ClusterDoc>, issues: CompileIssue[]): void {
  if (!doc.websocket || doc.cluster === undefined) return;
  const reached = [doc.cluster, ...splitClusters(steps)];
  for (const c of new Set(reached)) {
    const protocol = clusters.get(c)?.protocol;
    if (!isH2(protocol)) continue;
    issues.push({ kind: 'route', name, pointer: '/websocket', code: 'Compile.Route.WebSocket', message: `cluster ${c} speaks ${protocol} to its upstreams: WebSocket upgrades go upstream over HTTP/1.1 only; send them to an http1.1 cluster` });
  }
}
