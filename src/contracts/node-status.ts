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
  /** A replacement starting beside the slot's worker (a restart, a stalled or oversized worker). */
  replacing?: true;
  /** A standby replacement (state `starting`): booted while the slot's worker's loop is blocked, not listening, serving nothing. */
  standby?: true;
  /** A replaced worker leaving the slot: `draining` until it exits. */
  replaced?: true;
}

/** One worker of a restart, replaced: the replacement listened, then the old one was told to drain. */
export interface ReplacedWorker {
  slot: number;
  oldPid: number | null;
  newPid: number | null;
  at: string;
}

/** A `workers restart`: every worker replaced one at a time, the latest one kept for its progress. */
export interface WorkerRestartProgress {
  id: number;
  state: 'running' | 'done' | 'failed';
  startedAt: string;
  endedAt: string | null;
  /** Workers to replace (the slots when it started). */
  total: number;
  replaced: ReplacedWorker[];
  /** Why it stopped (`failed`): the worker that could not be replaced keeps serving, and so do the ones after it. */
  error: { slot: number; message: string } | null;
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
