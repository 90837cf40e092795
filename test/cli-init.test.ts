import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnRun, childEnv, tempDir } from './helpers/gateway.js';
import { runCli } from './helpers/cli.js';
import { freePorts } from './helpers/ports.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

interface InitAnswer {
  config: string;
  dataPort: number;
  adminPort: number;
  tokenEnv: string;
  token: string;
  admin: string;
  next: string[];
}

test('switchyard init writes a worker.json that runs with the printed variable; the token is never on disk; init again refuses', BOUNDED, async (t) => {
  const dir = join(tempDir(t), 'gw');
  const [port, adminPort] = await freePorts(2);
  const init = await runCli(['init', '--dir', dir, '--port', String(port), '--admin-port', String(adminPort)]);
  assert.equal(init.code, 0, init.stdout + init.stderr);
  const a = init.json as unknown as InitAnswer;
  assert.equal(a.config, join(dir, 'worker.json'));
  assert.equal(a.tokenEnv, 'SWITCHYARD_ROOT_TOKEN');
  assert.ok(a.token.length >= 43, 'a 256-bit token');
  assert.ok(a.next.some((l) => l === `export SWITCHYARD_ROOT_TOKEN=${a.token}`), a.next.join('\n'));
  const written = readFileSync(a.config, 'utf8');
  assert.ok(!written.includes(a.token), 'the token is not in the file');
  assert.deepEqual(JSON.parse(written).admin.keys, [{ id: 'root', tokenEnv: 'SWITCHYARD_ROOT_TOKEN', scopes: ['*'] }]);

  const run = spawnRun(t, ['run', '--config', a.config], childEnv({ SWITCHYARD_ROOT_TOKEN: a.token }));
  const ready = await run.ready();
  assert.match(ready, new RegExp(`^switchyard ready data=http://127\\.0\\.0\\.1:${port} admin=http://127\\.0\\.0\\.1:${adminPort} `));
  const who = await request(`${a.admin}/api/v1/sys/whoami`, { token: a.token });
  assert.equal(who.status, 200);
  assert.deepEqual(who.json.scopes, ['*']);

  const again = await runCli(['init', '--dir', dir]);
  assert.equal(again.code, 2);
  assert.equal((again.json as { code: string }).code, 'Cli.Input');
  assert.match(again.stderr, /already exists; init never overwrites/);
  assert.equal(readFileSync(a.config, 'utf8'), written, 'the file is unchanged');
});

test('switchyard init without ports picks ones that can be bound', BOUNDED, async (t) => {
  const init = await runCli(['init', '--dir', tempDir(t)]);
  assert.equal(init.code, 0, init.stdout + init.stderr);
  const a = init.json as unknown as InitAnswer;
  assert.ok(a.dataPort > 0 && a.adminPort > 0 && a.dataPort !== a.adminPort, JSON.stringify(a));
});
