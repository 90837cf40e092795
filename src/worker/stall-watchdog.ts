import { Worker } from 'node:worker_threads';
import type { Logger } from '../shared/logger.js';
import { BEAT, monotonicMs, type StepSites } from './step-sites.js';

/** How often the main loop beats; a stall is noticed within one beat and one poll of its bound. */
const BEAT_MS = 100;
const POLL_MS = 50;

/**
 * How long a blocked loop goes before its watchdog says `stall-suspect`: 1 s before the bound,
 * enough for a standby replacement to boot (about 0.7 s while a core spins), but never before
 * half the bound, so a short bound's brief hiccups do not fork processes.
 */
export function suspectMs(stallMs: number): number {
  return Math.max(Math.round(stallMs / 2), stallMs - 1000);
}

/**
 * The event-loop watchdog of one worker (worker.json `limits.eventLoopStallMs`): the main loop
 * writes a heartbeat into a cell shared with a thread every 100 ms (an unref'd timer); the
 * thread (stall-watchdog-thread.ts) reports a loop silent past the bound on the report pipe
 * `fd` (and, earlier, one it suspects: see `suspectMs`), naming the step the pipelines recorded in the same cell (step-sites.ts). Each runtime
 * built hands the thread the sites it numbered (`sync`).
 */
export class StallWatchdog {
  private readonly thread: Worker;
  private readonly beat: NodeJS.Timeout;

  constructor(
    private readonly sites: StepSites,
    stallMs: number,
    fd: number,
    log: Logger,
  ) {
    const cell = sites.cell;
    Atomics.store(cell, BEAT, monotonicMs());
    this.beat = setInterval(() => Atomics.store(cell, BEAT, monotonicMs()), BEAT_MS);
    this.beat.unref();
    this.thread = new Worker(new URL('./stall-watchdog-thread.js', import.meta.url), {
      workerData: { cell: cell.buffer, stallMs, suspectMs: suspectMs(stallMs), pollMs: POLL_MS, fd },
      // Small: it holds a table of names and one timer.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    });
    this.thread.unref();
    this.thread.on('error', (err) => log.error({ err }, 'the event-loop watchdog thread failed; stalls of this worker go unreported'));
    this.sync();
  }

  /** Hands the thread the step sites numbered since the last call (after a runtime is built). */
  sync(): void {
    const added = this.sites.takeAdded();
    if (added.length > 0) this.thread.postMessage(added);
  }

  stop(): Promise<number> {
    clearInterval(this.beat);
    return this.thread.terminate();
  }
}
