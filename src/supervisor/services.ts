import type { Volume } from '../store/volume.js';
import type { WorkerPool } from './worker-pool.js';
import type { Logger } from '../shared/logger.js';

/** The supervisor's state, as admin handlers see it. */
export interface Services {
  version: string;
  startedAt: number;
  volume: Volume;
  pool: WorkerPool;
  log: Logger;
  /** The generation the data plane serves (0 before the first publish). */
  currentGeneration(): number;
}
