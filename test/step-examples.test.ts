import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './helpers/gateway.js';
import type { StepDefinition } from '../src/sdk/step.js';

// The example step packages are built by the repository's `npm run build` (build:examples);
// here their own tests run as `npm test` would run them inside each package.
const EXAMPLES = ['hmac-signature', 'ab-assignment'];

for (const name of EXAMPLES) {
  const dir = join(ROOT, 'examples', 'steps', name);

  test(`examples/steps/${name}: its own tests pass against switchyard/testing`, () => {
    assert.ok(existsSync(join(dir, 'dist', 'index.js')), `${name} is not built: npm run build builds the examples`);
    // Without NODE_TEST_CONTEXT the child reports as a run of its own would (TAP), not to this runner.
    const { NODE_TEST_CONTEXT: _ctx, ...env } = process.env;
    const r = spawnSync(process.execPath, ['--test', '--test-reporter=tap', 'dist/test/'], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
    const count = (what: string) => Number(new RegExp(`^# ${what} (\\d+)$`, 'm').exec(r.stdout)?.[1] ?? NaN);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.ok(count('pass') >= 5, `passed: ${count('pass')}`);
    assert.equal(count('fail'), 0);
  });

  test(`examples/steps/${name}: a package the gateway can load (name, entry, a step definition)`, async () => {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; main: string; type: string; scripts: Record<string, string> };
    assert.equal(pkg.name, `switchyard-step-${name}`);
    assert.equal(pkg.type, 'module');
    assert.equal(pkg.scripts.build, 'tsc -p .');
    const def = ((await import(pathToFileURL(join(dir, pkg.main)).href)) as { default: StepDefinition }).default;
    assert.equal(def.code, name);
    assert.match(def.code, /^[a-z][a-z0-9-]{1,62}$/);
    for (const a of def.answers) assert.doesNotMatch(a.code, /^Svc\./);
    const { checkSettings } = (await import(pathToFileURL(join(ROOT, 'dist', 'sdk', 'testing.js')).href)) as typeof import('../src/sdk/testing.js');
    assert.deepEqual(checkSettings(def, def.example), []);
  });
}
