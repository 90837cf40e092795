import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { buildConfig, newToken, tempDir, writeJson } from './helpers/gateway.js';
import { runCli } from './helpers/cli.js';
import { BOUNDED } from './helpers/wait.js';

/**
 * `switchyard validate` warns (exit 0, ok true) about admin settings that work but are
 * risky: an admin port reachable beyond loopback, plaintext or short tokens. The admin
 * addresses below are never bound: validate starts nothing.
 */

function config(adminListen = '127.0.0.1:19180') {
  const built = buildConfig({ dataPort: 18080, adminPort: 19180, keys: [{ id: 'root', scopes: ['*'] }] });
  built.config.admin.listen = adminListen;
  return built;
}

async function validate(t: Parameters<typeof tempDir>[0], cfg: unknown, env: Record<string, string> = {}) {
  const file = writeJson(join(tempDir(t), 'worker.json'), cfg);
  const r = await runCli(['validate', '--config', file], { env });
  assert.ok(r.json, `validate printed no JSON: ${r.stdout} ${r.stderr}`);
  return r;
}

async function warningsOf(t: Parameters<typeof tempDir>[0], cfg: unknown, env: Record<string, string> = {}): Promise<string[]> {
  const r = await validate(t, cfg, env);
  assert.equal(r.code, 0, `warnings do not fail validation: ${r.stdout}`);
  assert.equal(r.json.ok, true);
  assert.equal(r.json.exitCode, 0);
  assert.ok(Array.isArray(r.json.warnings));
  return r.json.warnings;
}

const NON_LOOPBACK = /not a loopback|non-loopback/i;

test('validate warns when admin.listen is a non-loopback address', BOUNDED, async (t) => {
  for (const listen of ['10.255.255.1:9180', '192.168.77.5:9180', '[fd00::1]:9180']) {
    const { config: c, env } = config(listen);
    const warnings = await warningsOf(t, c, env);
    const hit = warnings.filter((w) => NON_LOOPBACK.test(w));
    assert.equal(hit.length, 1, `${listen}: one non-loopback warning in ${JSON.stringify(warnings)}`);
    assert.ok(hit[0]!.includes(listen.replace(/^\[|\]?:\d+$/g, '')), `${listen}: the warning names the address: ${hit[0]}`);
    assert.equal(warnings.length, 1, `${listen}: nothing else to warn about: ${JSON.stringify(warnings)}`);
  }
});

test('validate warns when the admin port listens on every interface', BOUNDED, async (t) => {
  for (const listen of ['0.0.0.0:9180', '[::]:9180']) {
    const { config: c, env } = config(listen);
    const warnings = await warningsOf(t, c, env);
    assert.equal(warnings.length, 1, `${listen}: ${JSON.stringify(warnings)}`);
    assert.match(warnings[0]!, /every interface/);
  }
});

test('validate has no address warning for loopback admin addresses', BOUNDED, async (t) => {
  for (const listen of ['127.0.0.1:9180', '127.10.20.30:9180', '[::1]:9180']) {
    const { config: c, env } = config(listen);
    assert.deepEqual(await warningsOf(t, c, env), [], listen);
  }
});

test('validate warns about a plaintext token in the file, and once more when it is short', BOUNDED, async (t) => {
  const short = config();
  short.config.admin.keys = [{ id: 'weak', token: 'hunter2-but-short', scopes: ['*'] }];
  const w1 = await warningsOf(t, short.config);
  assert.equal(w1.length, 2, JSON.stringify(w1));
  assert.ok(w1.some((w) => w.includes('weak') && /plaintext/i.test(w)), `a plaintext warning naming the key: ${JSON.stringify(w1)}`);
  assert.ok(w1.some((w) => w.includes('weak') && w.includes('32')), `a short-token warning naming the key: ${JSON.stringify(w1)}`);
  for (const w of w1) assert.ok(!w.includes('hunter2-but-short'), 'the warning does not echo the token');

  const long = config();
  long.config.admin.keys = [{ id: 'plain', token: newToken(), scopes: ['*'] }];
  const w2 = await warningsOf(t, long.config);
  assert.equal(w2.length, 1, JSON.stringify(w2));
  assert.match(w2[0]!, /plaintext/i);
  assert.ok(w2[0]!.includes('plain'));

  // a short token from the environment is not plaintext in the file, but still short
  const env = config();
  const warnings = await warningsOf(t, env.config, { SY_TEST_TOKEN_0: 'short' });
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  assert.ok(warnings[0]!.includes('root') && warnings[0]!.includes('32') && !/plaintext/i.test(warnings[0]!), warnings[0]);
});

test('validate warns about both at once: a non-loopback admin with a short plaintext token', BOUNDED, async (t) => {
  const { config: c } = config('10.255.255.1:9180');
  c.admin.keys = [{ id: 'weak', token: 'short', scopes: ['*'] }];
  const warnings = await warningsOf(t, c);
  assert.equal(warnings.length, 3, JSON.stringify(warnings));
  assert.ok(warnings.some((w) => NON_LOOPBACK.test(w)));
  assert.ok(warnings.some((w) => /plaintext/i.test(w)));
  assert.ok(warnings.some((w) => w.includes('32')));
});

test('validate checks admin.authFailures: defaults may be omitted, bad values and unknown fields are errors', BOUNDED, async (t) => {
  const ok = config();
  ok.config.admin.authFailures = { burst: 5, perSecond: 0.5 };
  assert.deepEqual(await warningsOf(t, ok.config, ok.env), []);
  const partial = config();
  partial.config.admin.authFailures = {};
  assert.deepEqual(await warningsOf(t, partial.config, partial.env), []);

  const bad: [unknown, string][] = [
    [{ burst: 0 }, 'admin.authFailures.burst'],
    [{ burst: 2.5 }, 'admin.authFailures.burst'],
    [{ perSecond: 0 }, 'admin.authFailures.perSecond'],
    [{ perSecond: -1 }, 'admin.authFailures.perSecond'],
    [{ perSecond: 'fast' }, 'admin.authFailures.perSecond'],
    [{ burts: 3 }, 'admin.authFailures.burts'],
  ];
  for (const [value, path] of bad) {
    const b = config();
    b.config.admin.authFailures = value;
    const r = await validate(t, b.config, b.env);
    assert.equal(r.code, 10, `${JSON.stringify(value)}: ${r.stdout}`);
    assert.equal(r.json.ok, false);
    assert.ok(
      r.json.errors.some((e: { path: string }) => e.path === path),
      `${JSON.stringify(value)}: an error names ${path}: ${JSON.stringify(r.json.errors)}`,
    );
  }
});
