import { CONNECTION_DEFAULTS, H2_PING_DEFAULT_MS, type CompiledCluster } from '../contracts/generation.js';
import type { Upstream } from '../contracts/upstream.js';
import type { TargetConnection } from '../shared/upstream-connect.js';
import type { UpstreamTlsError } from '../shared/upstream-tls.js';
import { TargetPool } from './target-pool.js';
import { H2TargetPool } from './engine/upstream-h2/h2-target-pool.js';

/** One target's connections as ClusterPools balances them, whichever protocol they speak. */
export interface TargetUpstream extends Upstream {
  /** Requests in flight or waiting for a connection (least-request, cluster status). */
  readonly busy: number;
  close(): Promise<void>;
}

/**
 * How long a connection without requests stays open: undici's keepAliveTimeout, which the
 * HTTP/1.1 pools keep; the HTTP/2 sessions close after the same, below the idle timeouts
 * upstreams commonly have (5 s and more), so a new stream rarely meets a closing connection.
 */
export const IDLE_CONNECTION_MS = 4_000;

/**
 * The pool of one target of `spec`: HTTP/1.1 (target-pool.ts), or HTTP/2 for an `h2`/`h2c`
 * cluster (upstream-h2/), both within the cluster's connection budget.
 */
export function targetUpstream(
  spec: CompiledCluster,
  target: string,
  c: TargetConnection,
  onConnectError: () => void,
  onTlsFailure?: (err: UpstreamTlsError) => void,
): TargetUpstream {
  const budget = spec.connections ?? CONNECTION_DEFAULTS; // a generation stored before the budget existed
  if (spec.protocol === 'h2' || spec.protocol === 'h2c') {
    return new H2TargetPool({
      target,
      connection: c,
      connections: budget.perTarget,
      maxPending: budget.maxPending,
      pendingTimeoutMs: budget.pendingTimeoutMs,
      idleMs: IDLE_CONNECTION_MS,
      connectMs: spec.connectMs,
      pingMs: spec.pingMs ?? H2_PING_DEFAULT_MS,
      onConnectError,
      ...(onTlsFailure ? { onTlsFailure } : {}),
    });
  }
  return new TargetPool(c.origin, {
    connections: budget.perTarget,
    maxPending: budget.maxPending,
    pendingTimeoutMs: budget.pendingTimeoutMs,
    ...(c.servername !== undefined ? { servername: c.servername } : {}),
    client: { pipelining: 1, keepAliveTimeout: IDLE_CONNECTION_MS, keepAliveMaxTimeout: 600_000, connect: c.connect },
    onConnectError,
  });
}
