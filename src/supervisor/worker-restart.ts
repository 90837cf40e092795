import type { ReplacedWorker, WorkerRestartProgress } from '../contracts/node-status.js';
import type { Logger } from '../shared/logger.js';
import { SvcError } from '../shared/errors.js';
import type { WorkerRestartView } from '../admin/services.js';
import type { WorkerPool } from './worker-pool.js';
import type { WorkerGuards } from './worker-guards.js';

export interface WorkerRestartOptions {
  /**
   * Called once before the first worker is replaced; the restart waits for it and fails if it
   * throws. What the workers load at start that may change while the node runs is refreshed
   * here, so the replacements start on it (a no-op today).
   */
  beforeRestart?: () => Promise<void>;
}

/**
 * `switchyard workers restart`: replaces every worker, one slot after another, in `drain`
 * mode (the replacement listens before the old one stops accepting, so no connection is
 * refused). One at a time per node: a second start while one runs is refused (409). The
 * latest restart stays readable for its progress.
 */
export class WorkerRestart implements WorkerRestartView {
  private last: WorkerRestartProgress | null = null;
  private nextId = 1;

  constructor(
    private readonly pool: WorkerPool,
    private readonly guards: WorkerGuards,
    private readonly log: Logger,
    private readonly opts: WorkerRestartOptions = {},
  ) {}

  /** A restart runs now (publishes wait for its end: publisher.ts). */
  running(): boolean {
    return this.last?.state === 'running';
  }

  latest(): WorkerRestartProgress | null {
    return this.last;
  }

  /** Starts a restart and returns its progress at once; it goes on in the background. */
  start(): WorkerRestartProgress {
    if (this.last?.state === 'running') throw new SvcError('Svc.Workers.RestartRunning', undefined, { restart: this.last });
    const progress: WorkerRestartProgress = {
      id: this.nextId++,
      state: 'running',
      startedAt: new Date().toISOString(),
      endedAt: null,
      total: this.pool.slots.length,
      replaced: [],
      error: null,
    };
    this.last = progress;
    this.log.info({ restart: progress.id, workers: progress.total }, 'workers restart: replacing every worker, one at a time');
    void this.run(progress);
    return progress;
  }

  private async run(p: WorkerRestartProgress): Promise<void> {
    let slot = -1;
    try {
      await (this.opts.beforeRestart ?? noop)();
      for (slot = 0; slot < p.total; slot++) {
        const r = await this.pool.replace(slot, 'drain');
        this.guards.counted('restart'); // a replacement that did not start is not one
        const done: ReplacedWorker = { slot, oldPid: r.oldPid ?? null, newPid: r.newPid ?? null, at: new Date().toISOString() };
        p.replaced.push(done);
        this.log.info({ restart: p.id, ...done }, `workers restart: worker ${p.replaced.length}/${p.total} replaced`);
      }
      p.state = 'done';
    } catch (err) {
      p.state = 'failed';
      p.error = { slot, message: (err as Error).message };
      this.log.error({ restart: p.id, slot, err: (err as Error).message }, 'workers restart stopped; the workers not replaced keep serving');
    }
    p.endedAt = new Date().toISOString();
  }
}

const noop = async (): Promise<void> => {};
