/** What the supervisor reports of its node: worker slots, fleet peers, probed targets. */

export type WorkerState = 'starting' | 'listening' | 'draining' | 'exited';

/** One worker slot as cluster status shows it. */
export interface WorkerStatus {
  slot: number;
  pid: number | null;
  state: WorkerState;
  generation: number;
  restarts: number;
  startedAt: string | null;
}

/** One node of a postgres:// fleet, from its heartbeat row. */
export interface FleetNode {
  id: string;
  admin: string;
  generation: number;
  startedAt: string;
  seenAt: string;
  self: boolean;
}

/** An actively probed target's verdict. */
export type TargetHealth = 'healthy' | 'unhealthy';

/** A probed target of one cluster with its counters (the cluster health endpoint). */
export interface ProbedTarget {
  target: string;
  state: TargetHealth;
  successes: number;
  failures: number;
  lastCheckedAt: string | null;
}
