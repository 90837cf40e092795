import type { Worker } from 'node:cluster';
import type { StallReport, WatchdogReport } from '../contracts/ipc.js';
import type { Logger } from '../shared/logger.js';
import type { WorkerPool } from './worker-pool.js';
import type { WorkerSlot } from './worker-slot.js';

/** Why a worker was replaced, as `switchyard_worker_replacements_total` counts it. */
export type ReplaceReason = 'stall' | 'heap' | 'fault' | 'restart';

/**
 * What the supervisor does with its workers' own alarms: a stall report from a worker's
 * watchdog (its event loop blocked past `limits.eventLoopStallMs`) is logged, counted by
 * route and step, and the worker is replaced and killed (it cannot drain: its loop is
 * stuck), by the standby its earlier `stall-suspect` booted when there is one; a worker past `limits.workerHeapMb` is replaced and drained. A slot whose worker
 * keeps passing the heap bound right after it starts is replaced with the respawn backoff's
 * delay, so a bound below what a worker needs cannot spin the node.
 */
export class WorkerGuards {
  private readonly stalls = new Map<string, { tenant: string; route: string; step: string; n: number }>();
  /** Workers that reported an uncaught exception and are not replaced yet. */
  private readonly faultedWorkers = new WeakSet<Worker>();
  private readonly replacements: Record<ReplaceReason, number> = { stall: 0, heap: 0, fault: 0, restart: 0 };

  constructor(
    private readonly pool: WorkerPool,
    private readonly log: Logger,
  ) {
    pool.onWorkerReport((slot, line, from) => {
      const report = parseReport(line);
      if (report?.type === 'stall') this.stalled(slot, report, from);
      else if (report?.type === 'stall-suspect') pool.suspectStall(slot, from, report.blockedMs);
      else if (report?.type === 'stall-cleared') pool.stallCleared(slot, from, report.blockedMs);
    });
    pool.onChange(() => this.faultedNowServing());
    pool.onWorkerMessage((slot, msg, from) => {
      if (msg.type === 'heap') this.oversized(slot, msg.usedMb, msg.limitMb, from);
      else if (msg.type === 'faulted') this.faulted(slot, from);
    });
  }

  /** `switchyard_worker_stalls_total`: per tenant, route and step ('' when no step was running). */
  stallCounts(): { tenant: string; route: string; step: string; n: number }[] {
    return [...this.stalls.values()];
  }

  replacementCounts(): Record<ReplaceReason, number> {
    return { ...this.replacements };
  }

  /** A replacement made for `reason` (the restart operation counts its own through this). */
  counted(reason: ReplaceReason): void {
    this.replacements[reason]++;
  }

  private stalled(slotNo: number, r: StallReport, from: Worker): void {
    const slot = this.pool.slots[slotNo];
    const pid = from.process.pid;
    const where = { tenant: r.tenant, route: r.route, step: r.step, ...(r.step === null && r.lastStep ? { lastStep: r.lastStep } : {}) };
    this.log.error({ slot: slotNo, pid, blockedMs: r.blockedMs, ...where }, 'worker event loop stalled; replacing it (its connections are lost)');
    const key = `${r.tenant ?? ''}\n${r.route ?? ''}\n${r.step ?? ''}`;
    const c = this.stalls.get(key) ?? { tenant: r.tenant ?? '', route: r.route ?? '', step: r.step ?? '', n: 0 };
    c.n++;
    this.stalls.set(key, c);
    // Not the slot's serving worker (a replacement still starting, a replaced one draining): nothing to keep.
    if (slot?.worker !== from || slot.state !== 'listening') return void from.process.kill('SIGKILL');
    if (slot.next) return; // already being replaced
    this.pool
      .replace(slotNo, 'kill')
      .then(() => this.counted('stall'))
      .catch((err: Error) => this.log.error({ slot: slotNo, pid, err: err.message }, 'the stalled worker could not be replaced; it keeps its slot'));
  }

  /** An uncaught exception: the worker's state is no longer known good; it is replaced after a drain (its log line said what threw). */
  /**
   * An uncaught exception: the worker's state is no longer known good; it is replaced after a
   * drain, with the respawn backoff's delay (a step that throws from a timer on every request
   * faults each replacement: the node must not spin). A worker that faulted before it held its
   * slot (a replacement still starting) is remembered and replaced once it does.
   */
  private faulted(slotNo: number, from: Worker): void {
    this.faultedWorkers.add(from);
    const slot = this.pool.slots[slotNo];
    if (slot?.worker !== from || slot.state !== 'listening' || slot.next) return;
    this.faultedWorkers.delete(from);
    this.drainLater(slot, from, 'fault', {}, 'worker had an uncaught exception; replacing it (drain)');
  }

  /** A worker remembered as faulted that now holds its slot, listening: replaced as faulted(). */
  private faultedNowServing(): void {
    for (const slot of this.pool.slots) if (slot.worker && this.faultedWorkers.has(slot.worker)) this.faulted(slot.slot, slot.worker);
  }

  private oversized(slotNo: number, usedMb: number, limitMb: number, from: Worker): void {
    const slot = this.pool.slots[slotNo];
    if (slot?.worker !== from || slot.state !== 'listening') return;
    this.drainLater(slot, from, 'heap', { usedMb, limitMb }, 'worker heap past limits.workerHeapMb; replacing it (drain)');
  }

  /** Replaces the slot's worker with a drain after the respawn backoff's delay (a slot that keeps failing young must not spin the node). */
  private drainLater(slot: WorkerSlot, from: Worker, reason: 'fault' | 'heap', fields: object, msg: string): void {
    const delay = slot.backoff.next(Date.now() - slot.startedAt);
    this.log.warn({ slot: slot.slot, pid: from.process.pid, ...fields, replaceInMs: delay }, msg);
    setTimeout(() => {
      if (slot.worker !== from || slot.next) return; // gone or being replaced meanwhile
      this.pool
        .replace(slot.slot, 'drain')
        .then(() => this.counted(reason))
        .catch((err: Error) => this.log.error({ slot: slot.slot, reason, err: err.message }, 'the worker could not be replaced; it keeps its slot'));
    }, delay).unref();
  }
}

function parseReport(line: string): WatchdogReport | null {
  try {
    const r = JSON.parse(line) as WatchdogReport;
    const known = r?.type === 'stall' || r?.type === 'stall-suspect' || r?.type === 'stall-cleared';
    return known && typeof r.blockedMs === 'number' ? r : null;
  } catch {
    return null;
  }
}
