import type { HealthTable } from '../contracts/ipc.js';

/**
 * The health checks' verdicts as this worker last heard them from the supervisor: per
 * cluster key, the targets out of rotation. The WorkerContext holds one; every
 * generation's ClusterPools compare `version` on each pick (one integer) and refresh
 * their own flags only when it moved.
 */
export class TargetHealth {
  version = 0;
  private table: HealthTable = {};

  set(table: HealthTable): void {
    this.table = table;
    this.version++;
  }

  /** The discovered addresses changed (worker-discovery.ts): the pools look again on their next pick. */
  touch(): void {
    this.version++;
  }

  /** Per target of `cluster`, whether the checks took it out of rotation. */
  down(cluster: string, targets: readonly string[]): boolean[] {
    const out = this.table[cluster];
    return targets.map((t) => out !== undefined && out.includes(t));
  }
}
