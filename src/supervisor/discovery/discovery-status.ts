import type { DiscoveryStatus } from '../../contracts/discovery.js';
import type { Source } from './discovery-source.js';

/**
 * A DNS target as `cluster health` shows it to whoever may read the cluster (its tenant
 * included): the addresses in use, how many the upstream policy refused and by which rule,
 * never which (a tenant must not map the operator's private names through its resolver;
 * the node log names them), and the last result as a class, not the resolver's text.
 */
export function sourceStatus(s: Source): DiscoveryStatus {
  const refused = new Map<string, number>();
  for (const r of s.refused) {
    const rule = withoutAddress(r.rule);
    refused.set(rule, (refused.get(rule) ?? 0) + 1);
  }
  return {
    name: s.spec.name,
    type: s.spec.type,
    port: s.spec.port ?? null,
    state: s.name.state,
    lastResolvedAt: iso(s.name.lastAt),
    lastResult: s.name.lastResult,
    addresses: s.addresses.map((a) => a.hostPort),
    refused: [...refused].map(([rule, count]) => ({ rule, count })),
    nextAt: iso(s.name.nextAt),
  };
}

/** "the gateway's own admin port (127.0.0.1:9000)" names the operator's listen address: the rule is shown without it. */
const withoutAddress = (rule: string): string => rule.replace(/ \([^()]*\)$/, '');

const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());
