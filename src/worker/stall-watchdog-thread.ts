/**
 * The stall watchdog's thread (started by stall-watchdog.ts): it polls the heartbeat the
 * worker's main loop writes into a shared cell and, once none came for `stallMs`, writes
 * one JSON line (a StallReport) to the report pipe. It runs on its own event loop, so a
 * main thread that never yields does not stop it; the write is synchronous for the same
 * reason the main thread cannot send: nothing else may be waited on.
 */
import { writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { StallReport } from '../contracts/ipc.js';
import { BEAT, LAST, monotonicMs, RUNNING, type StepSite } from './step-sites.js';

interface WatchdogData {
  cell: SharedArrayBuffer;
  stallMs: number;
  pollMs: number;
  fd: number;
}

const { cell: buffer, stallMs, pollMs, fd } = workerData as WatchdogData;
const cell = new Int32Array(buffer);
const sites = new Map<number, StepSite>();
parentPort!.on('message', (added: [number, StepSite][]) => {
  for (const [id, site] of added) sites.set(id, site);
});

let reportedBeat: number | null = null;
setInterval(() => {
  const beat = Atomics.load(cell, BEAT);
  const blockedMs = (monotonicMs() - beat) | 0;
  // Once per stall: the supervisor replaces the worker; a loop that comes back beats again.
  if (blockedMs < stallMs || reportedBeat === beat) return;
  reportedBeat = beat;
  const running = sites.get(Atomics.load(cell, RUNNING)) ?? null;
  const report: StallReport = {
    type: 'stall',
    blockedMs,
    tenant: running?.tenant ?? null,
    route: running?.route ?? null,
    step: running?.step ?? null,
    lastStep: sites.get(Atomics.load(cell, LAST)) ?? null,
  };
  try {
    writeSync(fd, JSON.stringify(report) + '\n');
  } catch {
    // The pipe is gone: the supervisor is too, and the worker follows it.
  }
}, pollMs);
