import type { CompiledCluster } from '../../contracts/generation.js';
import type { Flow } from '../../steps/step.js';
import { hashKey } from '../../shared/balance/hash-key.js';
import { targetChoice } from '../../shared/balance/target-choice.js';
import type { UpstreamView } from '../../contracts/explain.js';

/**
 * Where the proxy stage would send the request, chosen by the workers' own balancing code:
 * a hash cluster's target follows from the request's key (every target taken as healthy);
 * round robin and least-request depend on the requests before it, so only the candidates
 * are named.
 */
export function upstreamPick(name: string, spec: CompiledCluster, flow: Flow, clientKnown: boolean): UpstreamView {
  const rewritten = { path: flow.path, query: flow.query };
  const weights = spec.weights ? ` (weights ${spec.weights.join(', ')})` : '';
  const among = `${spec.targets.length} target(s): ${spec.targets.join(', ')}${weights}`;
  if (spec.targets.length === 0) {
    const why = spec.discover ? 'its DNS names have not resolved (drafts: they are resolved once published)' : 'none listed';
    return { cluster: name, balance: spec.balance ?? 'round-robin', target: null, reason: `no target: ${why}; 503 Svc.Data.NoTargets`, ...rewritten };
  }
  if (spec.balance === 'hash' && spec.hashOn) {
    if ('clientIp' in spec.hashOn && !clientKnown) {
      return { cluster: name, balance: 'hash', target: null, reason: `hash on the client address, which was not given (clientAddress); among ${among}`, ...rewritten };
    }
    const key = hashKey(spec.hashOn, flow.req);
    if (key === null) return { cluster: name, balance: 'hash', target: null, reason: `the request has no hash key (${Object.keys(spec.hashOn)[0]}): round robin among ${among}`, ...rewritten };
    const i = targetChoice(spec, () => 0)!.choose(key, () => true);
    return { cluster: name, balance: 'hash', target: spec.targets[i]!, reason: `hash of ${JSON.stringify(key)} (${Object.keys(spec.hashOn)[0]}), every target healthy`, ...rewritten };
  }
  if (spec.targets.length === 1) return { cluster: name, balance: spec.balance ?? 'round-robin', target: spec.targets[0]!, reason: 'the only target', ...rewritten };
  const how = spec.balance === 'least-request' ? 'least-request (the target with fewer requests in flight)' : 'round robin (each request the next)';
  return { cluster: name, balance: spec.balance ?? 'round-robin', target: null, reason: `${how} among ${among}`, ...rewritten };
}
