import type { Worker } from 'node:cluster';
import type { ToWorker } from '../contracts/ipc.js';
import type { Logger } from '../shared/logger.js';
import type { ForkHooks, Replaced, ReplaceHow, Retiring, WorkerSlot } from './worker-slot.js';

/** How long a replacement may take to listen before it is given up on and the old worker kept. */
const REPLACEMENT_START_MS = 30_000;

/** What replacing needs of the pool (worker-pool.ts): its fork, its messages, its change signal. */
export interface ReplacementHost {
  log: Logger;
  graceMs: number;
  stopping(): boolean;
  /** Forks a process for the slot: a replacement (`slot.next`) or a standby (`slot.standby`). */
  fork(slot: WorkerSlot, role: 'replacing' | 'standby', hooks: ForkHooks): Worker;
  post(worker: Worker, msg: ToWorker): void;
  changed(): void;
  respawn(slot: WorkerSlot, livedMs: number, why: Record<string, unknown>): void;
}

/**
 * Replacing a slot's worker: a new process starts beside it and takes the slot once it
 * listens; the old one is then drained or killed. A worker whose loop is suspected stalled
 * (its watchdog's `stall-suspect`) gets a standby: a replacement that boots (loads its
 * modules) but is not given init, so it neither listens nor holds a connection; the stall
 * then promotes it and the boot is not waited for again, and a loop that comes back drops it.
 */
export class WorkerReplacement {
  constructor(private readonly host: ReplacementHost) {}

  /**
   * Replaces the slot's worker (see WorkerPool.replace): its standby, if it has one, else a new
   * fork. A replacement that cannot start leaves the old one serving, and the promise rejects.
   */
  replace(slot: WorkerSlot, how: ReplaceHow): Promise<Replaced> {
    if (this.host.stopping()) return Promise.reject(new Error('the node is stopping'));
    if (slot.next) return Promise.reject(new Error(`worker ${slot.slot} is already being replaced`));
    if (!slot.worker || slot.state !== 'listening') return Promise.reject(new Error(`worker ${slot.slot} is ${slot.state}, not listening`));
    return new Promise((resolve, reject) => {
      const onFirstListen = (err?: Error, old?: Retiring): void => {
        clearTimeout(timer);
        if (err) {
          this.host.log.error({ slot: slot.slot, err }, 'the replacement worker did not start; the worker it was to replace keeps serving');
          return reject(err);
        }
        slot.restarts++;
        const newPid = slot.worker?.process.pid;
        if (!old) return resolve({ slot: slot.slot, oldPid: undefined, newPid, exited: Promise.resolve() });
        const exited = this.retire(slot, old, how);
        this.host.log.info({ slot: slot.slot, oldPid: old.worker.process.pid, newPid, how }, 'worker replaced');
        resolve({ slot: slot.slot, oldPid: old.worker.process.pid, newPid, exited });
      };
      const candidate = this.promote(slot, onFirstListen) ?? this.host.fork(slot, 'replacing', { onFirstListen });
      // A replacement that never comes up is given up on (its exit rejects the promise).
      const timer = setTimeout(() => candidate.process.kill('SIGKILL'), REPLACEMENT_START_MS);
      timer.unref();
    });
  }

  /** `stall-suspect` from the slot's worker: boots a standby unless one is there, or the slot is being replaced. */
  suspect(slot: WorkerSlot, from: Worker, blockedMs: number): void {
    if (this.host.stopping() || slot.worker !== from || slot.state !== 'listening' || slot.next || slot.standby) return;
    const standby = this.host.fork(slot, 'standby', {});
    this.host.log.warn({ slot: slot.slot, pid: from.process.pid, blockedMs, standbyPid: standby.process.pid }, 'worker event loop blocked; booting a standby replacement');
  }

  /** `stall-cleared` from the slot's worker: its loop came back before the bound, the standby goes (it never listened). */
  cleared(slot: WorkerSlot, from: Worker, blockedMs: number): void {
    const standby = slot.standby;
    if (slot.worker !== from || !standby) return;
    slot.standby = null;
    standby.worker.process.kill('SIGKILL');
    this.host.changed();
    this.host.log.info({ slot: slot.slot, pid: from.process.pid, blockedMs, standbyPid: standby.worker.process.pid }, 'worker event loop came back; its standby replacement is dropped');
  }

  /** The slot's worker exited on its own: its standby, if any, takes the slot as the respawn would. */
  respawnFromStandby(slot: WorkerSlot): boolean {
    if (!slot.standby || this.host.stopping()) return false;
    slot.restarts++;
    this.promote(slot);
    return true;
  }

  /** A standby died before it was needed: a stall then replaces the worker with a new fork. */
  standbyExited(slot: WorkerSlot, code: number | null, signal: string | null): void {
    slot.standby = null;
    this.host.changed();
    if (!this.host.stopping()) this.host.log.warn({ slot: slot.slot, code, signal }, 'the standby replacement exited; a stall would fork a new one');
  }

  /** A replacement died before it listened: the slot keeps its worker, or respawns if that one died meanwhile. */
  replacementExited(slot: WorkerSlot, code: number | null, signal: string | null, onFirstListen?: (err?: Error) => void): void {
    slot.next = null;
    this.host.changed();
    onFirstListen?.(new Error(`the replacement of worker ${slot.slot} exited before it listened (code ${code}, signal ${signal})`));
    if (!slot.worker && !this.host.stopping()) this.host.respawn(slot, 0, { code, signal });
  }

  /** The standby becomes the slot's replacement: given init now (or as soon as it booted). */
  private promote(slot: WorkerSlot, onFirstListen?: ForkHooks['onFirstListen']): Worker | null {
    const standby = slot.standby;
    if (!standby) return null;
    slot.standby = null;
    slot.next = standby.worker;
    standby.hooks.onFirstListen = onFirstListen;
    standby.start?.();
    this.host.changed();
    return standby.worker;
  }

  /** The replaced worker goes: drained (then killed after the grace) or killed; the slot lists it until it exits. */
  private retire(slot: WorkerSlot, old: Retiring, how: ReplaceHow): Promise<void> {
    const w = old.worker;
    slot.retiring.push(old);
    const exited = new Promise<void>((resolve) => {
      if (w.isDead()) return resolve();
      w.once('exit', () => resolve());
    }).then(() => {
      slot.retiring = slot.retiring.filter((r) => r !== old);
      this.host.changed();
    });
    if (how === 'kill' || !w.isConnected()) w.process.kill('SIGKILL');
    else {
      const kill = setTimeout(() => w.process.kill('SIGKILL'), this.host.graceMs + 1000);
      kill.unref();
      void exited.then(() => clearTimeout(kill));
      this.host.post(w, { type: 'drain', graceMs: this.host.graceMs });
    }
    this.host.changed();
    return exited;
  }
}
