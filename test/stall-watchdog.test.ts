import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import type { StallReport } from '../src/contracts/ipc.js';

const WORKER = fileURLToPath(new URL('./fixtures/stall-worker.ts', import.meta.url));

/** Runs the stand-in worker; resolves with its stdout lines and report-pipe lines, each with the time it arrived. */
function run(stallMs: number, blockMs: number): Promise<{ out: [number, string][]; reports: [number, StallReport][]; code: number | null }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', WORKER, String(stallMs), String(blockMs)], { stdio: ['ignore', 'pipe', 'inherit', 'ignore', 'pipe'] });
    const out: [number, string][] = [];
    const reports: [number, StallReport][] = [];
    p.stdout!.setEncoding('utf8').on('data', (d: string) => d.split('\n').filter(Boolean).forEach((l) => out.push([Date.now(), l])));
    (p.stdio[4] as Readable).setEncoding('utf8').on('data', (d: string) => d.split('\n').filter(Boolean).forEach((l) => reports.push([Date.now(), JSON.parse(l) as StallReport])));
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
  assert.equal(reports.length, 1, `one report per stall: ${JSON.stringify(reports)}`);
  const [at, r] = reports[0]!;
  assert.ok(at < unblockedAt, 'reported while the main thread was still blocked');
  assert.ok(at - started >= 400, `not before the bound (${at - started} ms after the block began)`);
  assert.equal(r.type, 'stall');
  assert.ok(r.blockedMs >= 500, `blockedMs ${r.blockedMs}`);
  assert.deepEqual([r.tenant, r.route, r.step], ['acme', 'slow', 'blocking-step']);
  assert.deepEqual(r.lastStep, { tenant: 'acme', route: 'slow', step: 'blocking-step' });
});

test('a loop blocked for less than the bound is not reported', { timeout: 60_000 }, async () => {
  const { reports, code } = await run(2_000, 800);
  assert.equal(code, 0);
  assert.deepEqual(reports, []);
});
