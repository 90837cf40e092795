import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, buildConfig, childEnv, tempDir, writeJson } from './helpers/gateway.js';
import { canBind, freePorts } from './helpers/ports.js';
import { childrenOf, commandOf } from './helpers/proc.js';
import { isRunning, waitFor } from './helpers/wait.js';

const DRAIN_MS = 1_000;

/**
 * `npm start -- --config <free ports>` in its own process group; resolves once the ready line
 * is printed, with the chain of PIDs: npm, the start script, the supervisor, its workers.
 * (--ignore-scripts skips only the prestart build: `npm test` has just built dist/.)
 */
async function npmStart(t: TestContext) {
  const [dataPort, adminPort] = await freePorts(2);
  const built = buildConfig({ dataPort: dataPort!, adminPort: adminPort!, workers: 2, drainGraceMs: DRAIN_MS, keys: [{ id: 'root', scopes: ['*'] }] });
  const config = writeJson(join(tempDir(t), 'worker.json'), built.config);
  const npm = spawn('npm', ['start', '--ignore-scripts', '--silent', '--', '--config', config], {
    cwd: ROOT,
    env: childEnv(built.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  npm.stdout.on('data', (c: Buffer) => (out += c.toString()));
  npm.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
  t.after(() => {
    // Whatever the test left: the group this test made, never anything by name.
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // all gone
    }
  });
  await waitFor('the ready line', () => out.includes('switchyard ready'), { timeoutMs: 30_000 }).catch((e: Error) => {
    throw new Error(`${e.message}; stdout: ${out}\nstderr: ${err}`);
  });
  const [start] = childrenOf(npm.pid!);
  assert.ok(start && commandOf(start).includes('scripts/start.js'), `npm's child is the start script itself (no shell between): ${start && commandOf(start)}`);
  const [supervisor] = childrenOf(start);
  assert.ok(supervisor && commandOf(supervisor).includes('bin/run.js run'), `the start script's child is the supervisor: ${supervisor && commandOf(supervisor)}`);
  const workers = childrenOf(supervisor);
  assert.equal(workers.length, 2, 'two workers');
  return { pids: { npm: npm.pid!, start, supervisor }, all: [npm.pid!, start, supervisor, ...workers], ports: [dataPort!, adminPort!], exited };
}

const CASES = [
  ['npm', 'SIGTERM'],
  ['start', 'SIGTERM'],
  ['supervisor', 'SIGTERM'],
  ['npm', 'SIGINT'],
] as const;

for (const [victim, signal] of CASES) {
  const name = { npm: "npm's PID", start: "the start script's PID", supervisor: "the supervisor's PID" }[victim];
  test(`npm start, then ${signal} to ${name} only: every process of it gone and both ports free within the drain + 2 s`, { timeout: 90_000 }, async (t) => {
    const run = await npmStart(t);
    const t0 = Date.now();
    process.kill(run.pids[victim], signal);
    await waitFor(
      'every process gone and both ports free',
      async () => run.all.every((pid) => !isRunning(pid)) && (await canBind(run.ports[0]!)) && (await canBind(run.ports[1]!)),
      { timeoutMs: DRAIN_MS + 2_000, intervalMs: 50 },
    ).catch((e: Error) => {
      throw new Error(`${e.message}; still running: ${run.all.filter(isRunning).map((p) => `${p} ${commandOf(p)}`).join('; ')}`);
    });
    await run.exited;
    t.diagnostic(`all gone ${Date.now() - t0} ms after the signal`);
  });
}
