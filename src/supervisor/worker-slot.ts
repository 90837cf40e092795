import type { Worker } from 'node:cluster';
import type { WorkerState } from '../contracts/node-status.js';
import type { RespawnBackoff } from './respawn-backoff.js';

/** One data-plane worker slot of the pool and the processes beside its worker. */
export interface WorkerSlot {
  slot: number;
  worker: Worker | null;
  state: WorkerState;
  generation: number;
  restarts: number;
  startedAt: number;
  backoff: RespawnBackoff;
  /** A replacement starting beside the slot's worker (`replace`): it takes the slot once it listens. */
  next: Worker | null;
  /** A replacement booted but not given init while the worker's loop is suspected stalled (worker-replacement.ts). */
  standby: Standby | null;
  /** Replaced workers until they exit (draining, or killed): shown by status, never respawned. */
  retiring: Retiring[];
}

/** A worker a replacement took the slot from. */
export interface Retiring {
  worker: Worker;
  generation: number;
  startedAt: number;
}

/** What the pool's fork calls back: read when it happens, so a standby's is set when it is promoted. */
export interface ForkHooks {
  /** The first listen (with the worker it took the slot from, for a replacement), or why it never came. */
  onFirstListen?: (err?: Error, old?: Retiring) => void;
}

/** A standby replacement: forked, never listening until promoted. */
export interface Standby {
  worker: Worker;
  hooks: ForkHooks;
  /** Set once it booted: sends it init, after which it listens and takes the slot. */
  start: (() => void) | null;
}

/** How a replaced worker goes: `drain` finishes what it holds (killed after drain.graceMs + 1 s), `kill` is SIGKILLed. */
export type ReplaceHow = 'drain' | 'kill';

export interface Replaced {
  slot: number;
  oldPid: number | undefined;
  newPid: number | undefined;
  /** Resolves once the replaced process has exited. */
  exited: Promise<void>;
}
