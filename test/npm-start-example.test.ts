import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, childEnv } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { canBind } from './helpers/ports.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

// `npm start` = build + scripts/start.js on config/worker.example.json (fixed ports 8080
// and 9180, as the README promises). The build already ran for `npm test`, so the test
// runs the start script itself.
test('npm start runs the example config with a one-time random root token', BOUNDED, async (t) => {
  for (const port of [8080, 9180]) {
    assert.ok(await canBind(port, port === 9180 ? '127.0.0.1' : '0.0.0.0'), `port ${port} must be free for the example config`);
  }
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'start.js')], {
    cwd: ROOT,
    env: childEnv({ SWITCHYARD_ROOT_TOKEN: undefined }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  t.after(() => {
    child.kill('SIGKILL');
  });

  const ready = await waitFor('the ready line', () => out.split('\n').find((l) => l.startsWith('switchyard ready')), { timeoutMs: 20_000 });
  assert.match(ready, /^switchyard ready data=http:\/\/0\.0\.0\.0:8080 admin=http:\/\/127\.0\.0\.1:9180 workers=\d+ generation=0$/);
  assert.equal(out.trim(), ready, 'the ready line is alone on stdout');

  const token = /SWITCHYARD_TOKEN=(\S+)/.exec(err)?.[1];
  assert.ok(token && token.length >= 32, `the generated token is shown once on stderr: ${err.slice(0, 500)}`);
  assert.equal(err.split(token).length - 1, 1, 'the token appears exactly once');

  const who = await request('http://127.0.0.1:9180/api/v1/sys/whoami', { token });
  assert.equal(who.status, 200);
  assert.deepEqual(who.json.scopes, ['*']);
  const data = await request('http://127.0.0.1:8080/');
  assert.equal(data.status, 503);

  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});
