import { CONNECTION_DEFAULTS, type CompiledCluster } from '../compiler/generation.js';
import { TargetPool, type Upstream } from '../shared/target-pool.js';

/**
 * Keep-alive connections to one cluster's targets, balanced round robin. Built once
 * per generation; closed (gracefully, after their requests finish) when the generation
 * that built them retires and goes idle.
 */
export class ClusterPools {
  private readonly pools: TargetPool[];
  private next = 0;

  constructor(readonly spec: CompiledCluster) {
    const budget = spec.connections ?? CONNECTION_DEFAULTS; // a generation stored before the budget existed
    this.pools = spec.targets.map(
      (t) =>
        new TargetPool(`http://${t}`, {
          connections: budget.perTarget,
          maxPending: budget.maxPending,
          pendingTimeoutMs: budget.pendingTimeoutMs,
          client: { pipelining: 1, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 600_000, connect: { timeout: spec.connectMs } },
        }),
    );
  }

  pick(): Upstream {
    const p = this.pools[this.next]!;
    this.next = this.next + 1 === this.pools.length ? 0 : this.next + 1;
    return p;
  }

  close(): Promise<void> {
    return Promise.all(this.pools.map((p) => p.close().catch(() => undefined))).then(() => undefined);
  }
}
