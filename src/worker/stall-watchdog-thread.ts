/**
 * The stall watchdog's thread (started by stall-watchdog.ts): it polls the heartbeat the
 * worker's main loop writes into a shared cell and writes JSON lines (WatchdogReport) to the
 * report pipe: `stall-suspect` once no beat came for `suspectMs`, `stall` once none came for
 * `stallMs`, `stall-cleared` when the loop beat again after a suspect but before the stall.
 * It runs on its own event loop, so a main thread that never yields does not stop it; the
 * write is synchronous for the same reason the main thread cannot send: nothing else may be
 * waited on.
 */
import { writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { WatchdogReport } from '../contracts/ipc.js';
import { BEAT, LAST, monotonicMs, RUNNING, type StepSite } from './step-sites.js';

interface WatchdogData {
  cell: SharedArrayBuffer;
  stallMs: number;
  suspectMs: number;
  pollMs: number;
  fd: number;
}

const { cell: buffer, stallMs, suspectMs, pollMs, fd } = workerData as WatchdogData;
const cell = new Int32Array(buffer);
const sites = new Map<number, StepSite>();
parentPort!.on('message', (added: [number, StepSite][]) => {
  for (const [id, site] of added) sites.set(id, site);
});

function write(report: WatchdogReport): void {
  try {
    writeSync(fd, JSON.stringify(report) + '\n');
  } catch {
    // The pipe is gone: the supervisor is too, and the worker follows it.
  }
}

/** The beat a suspect was reported for (null: none pending), and the last beat a stall was. */
let suspectedBeat: number | null = null;
let reportedBeat: number | null = null;
setInterval(() => {
  const beat = Atomics.load(cell, BEAT);
  const blockedMs = (monotonicMs() - beat) | 0;
  if (suspectedBeat !== null && beat !== suspectedBeat) {
    // The loop came back: before the bound, its standby replacement is not needed.
    if (reportedBeat !== suspectedBeat) write({ type: 'stall-cleared', blockedMs: (beat - suspectedBeat) | 0 });
    suspectedBeat = null;
  }
  if (blockedMs >= suspectMs && suspectedBeat === null && reportedBeat !== beat) {
    suspectedBeat = beat;
    write({ type: 'stall-suspect', blockedMs });
  }
  // Once per stall: the supervisor replaces the worker; a loop that comes back beats again.
  if (blockedMs < stallMs || reportedBeat === beat) return;
  reportedBeat = beat;
  const running = sites.get(Atomics.load(cell, RUNNING)) ?? null;
  write({
    type: 'stall',
    blockedMs,
    tenant: running?.tenant ?? null,
    route: running?.route ?? null,
    step: running?.step ?? null,
    lastStep: sites.get(Atomics.load(cell, LAST)) ?? null,
  });
}, pollMs);
