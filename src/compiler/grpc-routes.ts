import type { ClusterDoc, RouteDoc } from './documents.js';
import type { CompiledStep } from '../contracts/generation.js';
import { BUILTIN_STEPS } from '../steps/registry.js';
import { isH2, splitClusters } from './cluster-protocol.js';

type Issue = (pointer: string, message: string) => void;

/**
 * A gRPC route (`grpc`, docs/reference.md "gRPC"): its cluster speaks HTTP/2 (gRPC needs
 * trailers and full duplex), it takes no WebSocket, and none of its steps, inlined chains
 * included, reads or rewrites a body: a gRPC body is a stream of framed messages that
 * stays open for the call's life (a bidi call never ends it while it waits for answers).
 */
export function grpcRouteIssues(doc: RouteDoc, clusters: ReadonlyMap<string, ClusterDoc>, steps: CompiledStep[] | null, issue: Issue): void {
  const cluster = doc.cluster === undefined ? undefined : clusters.get(doc.cluster);
  if (!doc.grpc) return;
  const protocol = cluster?.protocol;
  if (cluster !== undefined && !isH2(protocol)) issue('/grpc', `cluster ${doc.cluster} speaks ${protocol ?? 'http1.1'}: a gRPC route needs a cluster with protocol "h2" or "h2c"`);
  // A traffic-split of the route may send a call elsewhere: there too HTTP/2.
  for (const c of splitClusters(steps ?? [])) {
    const p = clusters.get(c)?.protocol;
    if (clusters.has(c) && !isH2(p)) issue('/steps', `traffic-split may send a call to cluster ${c}, which speaks ${p ?? 'http1.1'}: a gRPC route's clusters need protocol "h2" or "h2c"`);
  }
  if (doc.websocket) issue('/websocket', 'a gRPC route takes no WebSocket upgrades');
  if (doc.requestBuffering && doc.requestBuffering.maxBytes > 0) issue('/requestBuffering', 'a gRPC route streams its bodies: requestBuffering.maxBytes must be 0 or absent');
  for (const code of new Set(codesOf(steps ?? []))) {
    // Only built-ins declare touchesBody: a package step's use of the body is its own (docs/step-packages.md).
    const why = BUILTIN_STEPS.get(code)?.touchesBody;
    if (why !== undefined) issue('/steps', `step ${code} ${why}: a gRPC route's bodies are streams of framed messages, so it cannot run there`);
  }
}

function* codesOf(steps: readonly CompiledStep[]): Generator<string> {
  for (const s of steps) {
    if (s.kind === 'step') yield s.code;
    else for (const member of s.members) yield* codesOf(member);
  }
}
