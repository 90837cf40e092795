import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildConfig, childEnv, exitWithin, spawnRun, startGateway, tempDir, writeJson } from './helpers/gateway.js';
import { freePorts } from './helpers/ports.js';
import { ROOT_KEY } from './helpers/admin.js';
import { runCli } from './helpers/cli.js';
import { BOUNDED } from './helpers/wait.js';

test('a second gateway on the same virtual:// file is refused with exit 10, and validate says why', BOUNDED, async (t) => {
  // Regression: both started, served and published from one store, and diverged: A kept
  // serving generation 1 while its history listed B's generation 2.
  const dir = tempDir(t);
  const volume = `virtual://${join(dir, 'shared.db')}`;
  const first = await startGateway(t, { volume, keys: [ROOT_KEY] });
  await assert.rejects(startGateway(t, { volume, keys: [ROOT_KEY], readyTimeoutMs: 8_000 }), /code 10[\s\S]*in use by another gateway/);

  const config = join(dir, 'second.json');
  writeFileSync(config, JSON.stringify({ volume, listen: { port: 1 }, admin: { listen: '127.0.0.1:2' } }));
  const v = await runCli(['validate', '--config', config]);
  assert.equal(v.code, 10, v.stdout);
  assert.match(JSON.stringify(v.json.errors), /in use by another gateway/);

  assert.equal((await first.stop()).code, 0);
  const again = await startGateway(t, { volume, keys: [ROOT_KEY] });
  assert.equal((await again.stop()).code, 0, 'free again once the first stopped');
});

test('validate refuses what run would refuse: a file that is not SQLite, the admin port on the data port', BOUNDED, async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'junk.db'), 'this is not a database, just text long enough to look like a header ...........');
  const cases = [
    { volume: 'virtual://junk.db', listen: { port: 18_001 }, admin: { listen: '127.0.0.1:18002' } },
    { volume: 'memory:', listen: { port: 18_003, host: '127.0.0.1' }, admin: { listen: '127.0.0.1:18003' } },
    { volume: 'memory:', listen: { port: 18_004 }, admin: { listen: '127.0.0.1:18004' } },
  ];
  for (const [i, c] of cases.entries()) {
    const file = join(dir, `c${i}.json`);
    writeFileSync(file, JSON.stringify(c));
    const v = await runCli(['validate', '--config', file]);
    assert.equal(v.code, 10, `case ${i}: ${v.stdout}`);
    assert.equal(v.json.ok, false);
  }
});

test('a volume on a read-only filesystem: run exits 10 instead of serving a gateway that cannot write', BOUNDED, async (t) => {
  // Regression: a volume left by a hard stop (-wal/-shm present) on a filesystem remounted
  // read-only started a gateway whose every `config set` answered 500.
  const mnt = mkdtempSync('/tmp/sy-ro-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mnt], { stdio: 'ignore' });
  } catch {
    rmSync(mnt, { recursive: true, force: true });
    return t.skip('cannot mount a tmpfs here (needs root)');
  }
  t.after(() => {
    try {
      execFileSync('umount', ['-l', mnt], { stdio: 'ignore' });
      rmSync(mnt, { recursive: true, force: true });
    } catch {
      // already gone
    }
  });
  const volume = `virtual://${join(mnt, 'state.db')}`;
  const first = await startGateway(t, { volume, keys: [ROOT_KEY] });
  first.kill(); // a hard stop: the WAL files stay
  await first.exited;
  execFileSync('mount', ['-o', 'remount,ro', mnt]);
  const [dataPort, adminPort] = await freePorts(2);
  const { config, env } = buildConfig({ dataPort: dataPort!, adminPort: adminPort!, volume, keys: [ROOT_KEY] });
  const p = spawnRun(t, ['run', '--config', writeJson(join(tempDir(t), 'worker.json'), config)], childEnv(env));
  const exit = await exitWithin(p, 8_000);
  assert.equal(exit.timedOut, false, `it started: ${p.stdout()}`);
  assert.equal(exit.code, 10, p.stderr());
  assert.match(p.stderr(), /cannot (be written|open volume)/);
});
