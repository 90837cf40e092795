import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import type { StallReport, WatchdogReport } from '../src/contracts/ipc.js';

const WORKER = fileURLToPath(new URL('./fixtures/stall-worker.ts', import.meta.url));

/** Runs the stand-in worker; resolves with its stdout lines and report-pipe lines, each with the time it arrived. */
function run(stallMs: number, blockMs: number): Promise<{ out: [number, string][]; reports: [number, WatchdogReport][]; code: number | null }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', WORKER, String(stallMs), String(blockMs)], { stdio: ['ignore', 'pipe', 'inherit', 'ignore', 'pipe'] });
    const out: [number, string][] = [];
    const reports: [number, WatchdogReport][] = [];
    p.stdout!.setEncoding('utf8').on('data', (d: string) => d.split('\n').filter(Boolean).forEach((l) => out.push([Date.now(), l])));
    (p.stdio[4] as Readable).setEncoding('utf8').on('data', (d: string) => d.split('\n').filter(Boolean).forEach((l) => reports.push([Date.now(), JSON.parse(l) as WatchdogReport])));
    const kill = setTimeout(() => p.kill('SIGKILL'), 30_000);
    p.on('close', (code) => {
      clearTimeout(kill);
      resolve({ out, reports, code });
    });
  });
}

test('the watchdog thread reports a blocked loop while it is still blocked, once, naming the step that was running', { timeout: 60_000 }, async () => {
  const { out, reports, code } = await run(500, 3_000);
  assert.equal(code, 0);
  const started = Number(out.find(([, l]) => l.startsWith('blocking'))![1].split(' ')[1]);
  const unblockedAt = out.find(([, l]) => l.startsWith('unblocked'))![0];
  // First the suspect (at half the 500 ms bound), then the stall; no stall-cleared: the stall was reported.
  assert.deepEqual(reports.map(([, r]) => r.type), ['stall-suspect', 'stall'], JSON.stringify(reports));
  const [suspectAt, suspect] = reports[0]!;
  assert.ok(suspectAt - started >= 150, `suspect not before its threshold (${suspectAt - started} ms after the block began)`);
  assert.ok(suspect.blockedMs >= 250 && suspect.blockedMs < 500, `suspect blockedMs ${suspect.blockedMs}`);
  const [at, r] = reports[1]! as [number, StallReport];
  assert.ok(at < unblockedAt, 'reported while the main thread was still blocked');
  assert.ok(at - started >= 400, `not before the bound (${at - started} ms after the block began)`);
  assert.equal(r.type, 'stall');
  assert.ok(r.blockedMs >= 500, `blockedMs ${r.blockedMs}`);
  assert.deepEqual([r.tenant, r.route, r.step], ['acme', 'slow', 'blocking-step']);
  assert.deepEqual(r.lastStep, { tenant: 'acme', route: 'slow', step: 'blocking-step' });
});

test('a loop blocked for less than the suspect threshold is not reported', { timeout: 60_000 }, async () => {
  // Bound 2000 ms: suspected at 1000 ms (half the bound; also the bound less 1 s).
  const { reports, code } = await run(2_000, 700);
  assert.equal(code, 0);
  assert.deepEqual(reports, []);
});

test('a loop blocked past the suspect threshold but not the bound: stall-suspect while blocked, stall-cleared once it beats again', { timeout: 60_000 }, async () => {
  const { out, reports, code } = await run(2_000, 1_500);
  assert.equal(code, 0);
  const unblockedAt = out.find(([, l]) => l.startsWith('unblocked'))![0];
  assert.deepEqual(reports.map(([, r]) => r.type), ['stall-suspect', 'stall-cleared'], JSON.stringify(reports));
  const [suspectAt, suspect] = reports[0]!;
  const [clearedAt, cleared] = reports[1]!;
  assert.ok(suspectAt < unblockedAt, 'suspected while the main thread was still blocked');
  assert.ok(suspect.blockedMs >= 1_000 && suspect.blockedMs < 2_000, `suspect blockedMs ${suspect.blockedMs}`);
  assert.ok(clearedAt >= unblockedAt, 'cleared once the loop came back');
  // The gap between the beats around the block: the block and up to one beat interval either side.
  assert.ok(cleared.blockedMs >= 1_400 && cleared.blockedMs < 2_000, `cleared blockedMs ${cleared.blockedMs}`);
});

test('the suspect threshold: half the bound, or 1 s before it, whichever is later', async () => {
  const { suspectMs } = await import('../dist/worker/stall-watchdog.js');
  assert.equal(suspectMs(500), 250);
  assert.equal(suspectMs(2_000), 1_000);
  assert.equal(suspectMs(10_000), 9_000);
});
