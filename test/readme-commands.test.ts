import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, childEnv, startGateway, tempDir } from './helpers/gateway.js';

/**
 * The README's `sh` blocks, in order, from "Usage by example" on. The Quick start block
 * above it (npm install, npm start, npm test) is the setup this test stands in for, and
 * what the clean-clone CI runs.
 */
function readmeBlocks(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf('## Usage by example');
  assert.ok(from > 0, 'the README has its usage section');
  return [...readme.slice(from).matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn('bash', [script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.on('close', (code) => resolve({ code, out }));
  });
}

test("every command block of the README runs as written against a gateway and a service on port 3000's stand-in", { timeout: 180_000 }, async (t) => {
  const upstream = createServer((req, res) => res.end(`upstream saw ${req.url}`));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  t.after(() => upstream.close());
  const upstreamPort = (upstream.address() as { port: number }).port;
  // The example config's shape: memory volume, one `*` key from SWITCHYARD_ROOT_TOKEN.
  const gw = await startGateway(t, { workers: 2, keys: [{ id: 'root', scopes: ['*'] }] });

  const blocks = readmeBlocks();
  assert.ok(blocks.length >= 2, `${blocks.length} blocks`);
  // The README's ports are the example config's; this gateway's are chosen now.
  const ported = (s: string) =>
    s
      .replace(/:8080\b/g, `:${gw.dataPort}`)
      .replace(/:9180\b/g, `:${gw.adminPort}`)
      .replace(/:3000\b/g, `:${upstreamPort}`);
  const dir = tempDir(t);
  const env = childEnv({ SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: gw.tokens.root });
  const outputs: string[] = [];
  for (const [i, block] of blocks.entries()) {
    const file = join(dir, `block-${i}.sh`);
    // -e: a failing command fails the block; -x: the log shows which one.
    writeFileSync(file, `shopt -s expand_aliases\nset -ex\n${ported(block)}`);
    const r = await bash(file, env);
    assert.equal(r.code, 0, `README block ${i + 1} failed:\n${r.out.slice(-6000)}`);
    outputs.push(r.out);
  }

  const usage = outputs[0]!;
  assert.match(usage, /"code":"Svc\.Data\.NotPublished"/, 'the first curl meets an unpublished gateway');
  // curl prints a body without a line end: the next trace line follows on the same line.
  assert.match(usage, /^ok(?![\w-])/m, '/ping answers ok');
  assert.match(usage, /^upstream saw \/api\/users\?page=2(?!&)/m, 'the api route proxies to the service');
  assert.match(usage, /"kind":"tenant","tenant":"acme"/, 'the sub-key knows its tenant');
  assert.match(usage, /^hello from acme/m, "acme's route answers on its host");
  assert.match(usage, /^# HELP /m, 'the metrics are Prometheus text');
  assert.match(usage, /"warnings":\[\]/, 'the dry-runs answer');
  assert.doesNotMatch(usage, /"warnings":\[\{/, 'the README\'s configuration draws no warning (no shadowed route, unused cluster or chain)');
});
