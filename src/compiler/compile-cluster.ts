import { discoverTargets, fixedTargets } from './cluster-discovery.js';
import type { CertDoc, ClusterDoc } from './documents.js';
import { compileTls } from './cluster-tls.js';
import { CONNECTION_DEFAULTS, H2_PING_DEFAULT_MS, type CompiledCluster } from '../contracts/generation.js';

export const targetAddress = (t: ReturnType<typeof fixedTargets>[number]['target']): string => (typeof t === 'string' ? t : t.address);

/** A cluster document as workers and the supervisor use it: fixed targets, DNS sources, the defaults filled in. */
export function compileCluster(tenant: string, key: string, c: ClusterDoc, certs: ReadonlyMap<string, CertDoc>): CompiledCluster {
  const fixed = fixedTargets(c).map((t) => t.target);
  const weights = fixed.map((t) => (typeof t === 'string' ? 1 : t.weight));
  const discover = discoverTargets(key, c);
  return {
    targets: fixed.map(targetAddress),
    ...(weights.some((w) => w !== 1) ? { weights } : {}),
    ...(discover.length ? { discover } : {}),
    balance: c.balance,
    ...(c.hashOn ? { hashOn: c.hashOn } : {}),
    ...(c.outlier ? { outlier: c.outlier } : {}),
    ...(c.retry ? { retry: c.retry } : {}),
    ...(c.healthCheck ? { healthCheck: { ...c.healthCheck, expectStatus: c.healthCheck.expectStatus ?? [] } } : {}),
    connectMs: c.timeouts?.connectMs ?? 5_000,
    headersMs: c.timeouts?.headersMs ?? 30_000,
    bodyMs: c.timeouts?.bodyMs ?? 30_000,
    connections: {
      perTarget: c.connections?.perTarget ?? CONNECTION_DEFAULTS.perTarget,
      maxPending: c.connections?.maxPending ?? CONNECTION_DEFAULTS.maxPending,
      pendingTimeoutMs: c.connections?.pendingTimeoutMs ?? CONNECTION_DEFAULTS.pendingTimeoutMs,
    },
    ...(c.tls ? { tls: compileTls(tenant, c.tls, certs) } : {}),
    // Absent for HTTP/1.1: a generation stored before the field existed reads the same.
    ...(c.protocol === 'h2' || c.protocol === 'h2c' ? { protocol: c.protocol, pingMs: c.timeouts?.pingMs ?? H2_PING_DEFAULT_MS } : {}),
  };
}
