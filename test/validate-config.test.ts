import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { buildConfig, newToken, tempDir, writeJson } from './helpers/gateway.js';
import { runCli } from './helpers/cli.js';
import { BOUNDED } from './helpers/wait.js';
import type { Json } from './helpers/json.js';
import { uwsSupport } from '../src/shared/uws-support.js';

/** A complete, valid worker.json (tokens from the environment, so no plaintext warnings). */
function goodConfig() {
  return buildConfig({
    dataPort: 18080,
    adminPort: 19180,
    keys: [{ id: 'root', scopes: ['*'] }],
    workers: 2,
    drainGraceMs: 1000,
  });
}

async function validate(t: Parameters<typeof tempDir>[0], config: unknown, env: Record<string, string> = {}) {
  const file = writeJson(join(tempDir(t), 'worker.json'), config);
  const r = await runCli(['validate', '--config', file], { env });
  assert.ok(r.json, `validate printed no JSON: ${r.stdout} ${r.stderr}`);
  return r;
}

function assertRejected(r: Awaited<ReturnType<typeof validate>>, path: string) {
  assert.equal(r.code, 10, `exit code; stdout: ${r.stdout}`);
  assert.equal(r.json.ok, false);
  assert.equal(r.json.exitCode, 10);
  assert.ok(Array.isArray(r.json.warnings));
  assert.ok(Array.isArray(r.json.errors) && r.json.errors.length > 0, 'errors listed');
  for (const e of r.json.errors) {
    assert.equal(typeof e.path, 'string');
    assert.equal(typeof e.message, 'string');
  }
  assert.ok(
    r.json.errors.some((e: { path: string }) => e.path === path),
    `an error names the field path ${path}: ${JSON.stringify(r.json.errors)}`,
  );
}

test('validate accepts a good file: ok, exitCode 0, warnings listed, exit 0', BOUNDED, async (t) => {
  const { config, env } = goodConfig();
  const r = await validate(t, config, env);
  assert.equal(r.code, 0, r.stdout);
  assert.equal(r.json.ok, true);
  assert.equal(r.json.exitCode, 0);
  assert.deepEqual(r.json.warnings, []);
  assert.equal(r.json.errors, undefined);
});

test('validate names the engine each listener will use on this runtime, and why; the TLS line gives the ALPN list', BOUNDED, async (t) => {
  const support = uwsSupport();
  const auto = await validate(t, goodConfig().config, goodConfig().env);
  assert.equal(auto.code, 0, auto.stdout);
  const expected = support.ok ? 'engine uws (auto: uWebSockets.js loads on this runtime)' : `engine node (auto: ${support.reason})`;
  assert.deepEqual(auto.json.listeners.map((l: { line: string }) => l.line), [`data port 127.0.0.1:18080: ${expected}, http/1.1`]);
  assert.equal(auto.json.listeners[0].engine, support.ok ? 'uws' : 'node');

  const { config, env } = goodConfig();
  config.listen = { ...config.listen, engine: 'node', h2c: true, tls: { port: 18443 } };
  const node = await validate(t, config, env);
  assert.equal(node.code, 0, node.stdout);
  assert.deepEqual(node.json.listeners.map((l: { line: string }) => l.line), [
    'data port 127.0.0.1:18080: engine node (listen.engine: node), http/1.1, h2c',
    'TLS port 127.0.0.1:18443: engine node, ALPN h2, http/1.1',
  ]);
  assert.deepEqual(node.json.listeners[1].protocols, ['h2', 'http/1.1']);

  config.listen = { ...config.listen, engine: 'uws' };
  const uws = await validate(t, config, env);
  assertRejected(uws, 'listen.h2c');
  assert.ok(uws.json.errors.some((e: { message: string }) => e.message === 'the uws engine speaks HTTP/1.1 only'), JSON.stringify(uws.json.errors));
  if (!support.ok) assertRejected(uws, 'listen.engine');
});

test('validate accepts the shipped example config when its token variable is set', BOUNDED, async () => {
  const r = await runCli(['validate', '--config', 'config/worker.example.json'], {
    env: { SWITCHYARD_ROOT_TOKEN: newToken() },
  });
  assert.equal(r.code, 0, r.stdout);
  assert.equal(r.json.ok, true);
});

test('validate warns about a short plaintext admin token but still passes', BOUNDED, async (t) => {
  const config = goodConfig().config;
  config.admin.keys = [{ id: 'weak', token: 'short-token', scopes: ['*'] }];
  const r = await validate(t, config);
  assert.equal(r.code, 0, r.stdout);
  assert.equal(r.json.ok, true);
  assert.ok(r.json.warnings.some((w: string) => w.includes('weak') && w.includes('32')), JSON.stringify(r.json.warnings));
});

test('validate warns when there are no admin keys', BOUNDED, async (t) => {
  const config = goodConfig().config;
  config.admin.keys = [];
  const r = await validate(t, config);
  assert.equal(r.code, 0, r.stdout);
  assert.equal(r.json.ok, true);
  assert.equal(r.json.warnings.length, 1, JSON.stringify(r.json.warnings));
});

const unknownFields: [string, (c: Record<string, Json>) => void, string][] = [
  ['at the top level', (c) => (c.bogus = 1), 'bogus'],
  ['in listen', (c) => (c.listen.portt = 8080), 'listen.portt'],
  ['in admin', (c) => (c.admin.keyz = []), 'admin.keyz'],
  ['in an admin key', (c) => (c.admin.keys[0].scope = ['*']), 'admin.keys.0.scope'],
  ['in log', (c) => (c.log.format = 'json'), 'log.format'],
  ['in drain', (c) => (c.drain.grace = 5), 'drain.grace'],
];
for (const [where, edit, path] of unknownFields) {
  test(`validate rejects an unknown field ${where}: ok false, exitCode 10, exit 10`, BOUNDED, async (t) => {
    const { config, env } = goodConfig();
    edit(config);
    assertRejected(await validate(t, config, env), path);
  });
}

test('validate rejects a missing listen.port with exit 10', BOUNDED, async (t) => {
  const { config, env } = goodConfig();
  delete config.listen.port;
  assertRejected(await validate(t, config, env), 'listen.port');
});

test('validate rejects a missing admin.listen with exit 10', BOUNDED, async (t) => {
  const { config, env } = goodConfig();
  delete config.admin.listen;
  assertRejected(await validate(t, config, env), 'admin.listen');
});

test('validate rejects a missing volume with exit 10', BOUNDED, async (t) => {
  const { config, env } = goodConfig();
  delete config.volume;
  assertRejected(await validate(t, config, env), 'volume');
});

test('validate rejects a key whose tokenEnv variable is unset', BOUNDED, async (t) => {
  const { config } = goodConfig();
  assertRejected(await validate(t, config, {}), 'admin.keys.0.tokenEnv');
});

test('validate rejects a file that is not JSON, and a missing file, with exit 10', BOUNDED, async (t) => {
  const dir = tempDir(t);
  const bad = writeJson(join(dir, 'bad.json'), '{"volume": "memory:",');
  for (const file of [bad, join(dir, 'does-not-exist.json')]) {
    const r = await runCli(['validate', '--config', file]);
    assert.equal(r.code, 10, r.stdout);
    assert.equal(r.json.ok, false);
    assert.equal(r.json.exitCode, 10);
    assert.ok(r.json.errors.length > 0);
  }
});

test('validate rejects a system key scope of an unknown family, as key issue does', BOUNDED, async (t) => {
  // Regression: `bogus:read` validated ok (and granted nothing) while `key issue` refused it.
  const { config, env } = goodConfig();
  (config.admin as { keys: { scopes: string[] }[] }).keys[0]!.scopes = ['config:read', 'bogus:read'];
  assertRejected(await validate(t, config, env), 'admin.keys.0.scopes.1');
});

test('regression: validate rejects a key bound to tenant sys, and two keys sharing one token', BOUNDED, async (t) => {
  const { config, env } = goodConfig();
  const keys = (config.admin as { keys: Record<string, unknown>[] }).keys;
  keys.push({ id: 'sys-bound', tokenEnv: 'SY_SYS_TOKEN', scopes: ['config:read'], tenant: 'sys' });
  assertRejected(await validate(t, config, { ...env, SY_SYS_TOKEN: newToken() }), 'admin.keys.1.tenant');

  const twin = goodConfig();
  const twinKeys = (twin.config.admin as { keys: Record<string, unknown>[] }).keys;
  const rootEnv = twinKeys[0]!.tokenEnv as string;
  twinKeys.push({ id: 'reader', tokenEnv: 'SY_READER_TOKEN', scopes: ['config:read'] });
  const r = await validate(t, twin.config, { ...twin.env, SY_READER_TOKEN: twin.env[rootEnv]! });
  assertRejected(r, 'admin.keys.1');
  assert.match(r.json.errors.find((e: { path: string }) => e.path === 'admin.keys.1').message, /same token as admin key root/);
});
