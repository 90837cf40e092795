import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './helpers/cli.js';
import { BOUNDED } from './helpers/wait.js';

test('a bad CLI argument exits 2 with a Cli.Input envelope on stdout, before any call', BOUNDED, async () => {
  // Regression: oclif's parse errors exited 2 with text on stderr only, so a script
  // branching on the JSON `code` (as README promises) read an empty stdout.
  const env = { SWITCHYARD_ADMIN: 'http://127.0.0.1:1', SWITCHYARD_TOKEN: 'unused' }; // never reached
  const cases: [string[], RegExp][] = [
    [['publish', 'rollback', 'abc'], /integer/],
    [['publish', 'rollback', '0'], /greater than or equal to 1/],
    [['config', 'delete', 'widget', 'x'], /cluster, route, orch/],
    [['config', 'get', 'route'], /name/i],
  ];
  for (const [args, message] of cases) {
    const r = await runCli(args, { env });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout} ${r.stderr}`);
    assert.equal(r.json?.code, 'Cli.Input', `${args.join(' ')}: stdout was ${JSON.stringify(r.stdout)}`);
    assert.match(r.json.message, message);
  }
});

test('regression: a token with a line end or a space is bad input (exit 2), not an unreachable port (exit 4)', BOUNDED, async () => {
  for (const token of ['a-token-from-a-windows-file\r', 'two words']) {
    const r = await runCli(['whoami'], { env: { SWITCHYARD_ADMIN: 'http://127.0.0.1:1', SWITCHYARD_TOKEN: token } });
    assert.equal(r.code, 2, `${JSON.stringify(token)}: ${r.stdout} ${r.stderr}`);
    assert.equal(r.json?.code, 'Cli.Input');
    assert.match(r.json.message, /token/);
  }
});
