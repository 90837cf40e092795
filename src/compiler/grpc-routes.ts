import type { ClusterDoc, RouteDoc } from './documents.js';
import type { CompiledStep } from '../contracts/generation.js';
import { STEPS } from '../steps/registry.js';

type Issue = (pointer: string, message: string) => void;

/**
 * A gRPC route (`grpc`, docs/reference.md "gRPC"): its cluster speaks HTTP/2 (gRPC needs
 * trailers and full duplex), it takes no WebSocket, and none of its steps, inlined chains
 * included, reads or rewrites a body: a gRPC body is a stream of framed messages that
 * stays open for the call's life (a bidi call never ends it while it waits for answers).
 */
export function grpcRouteIssues(doc: RouteDoc, cluster: ClusterDoc | undefined, steps: CompiledStep[] | null, issue: Issue): void {
  if (!doc.grpc) return;
  const protocol = cluster?.protocol;
  if (cluster !== undefined && protocol !== 'h2' && protocol !== 'h2c') issue('/grpc', `cluster ${doc.cluster} speaks ${protocol ?? 'http1.1'}: a gRPC route needs a cluster with protocol "h2" or "h2c"`);
  if (doc.websocket) issue('/websocket', 'a gRPC route takes no WebSocket upgrades');
  if (doc.requestBuffering && doc.requestBuffering.maxBytes > 0) issue('/requestBuffering', 'a gRPC route streams its bodies: requestBuffering.maxBytes must be 0 or absent');
  for (const code of new Set(codesOf(steps ?? []))) {
    const why = STEPS.get(code)?.touchesBody;
    if (why !== undefined) issue('/steps', `step ${code} ${why}: a gRPC route's bodies are streams of framed messages, so it cannot run there`);
  }
}

function* codesOf(steps: readonly CompiledStep[]): Generator<string> {
  for (const s of steps) {
    if (s.kind === 'step') yield s.code;
    else for (const member of s.members) yield* codesOf(member);
  }
}
