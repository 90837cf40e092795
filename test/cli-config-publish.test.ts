import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { ROOT, RUN_JS, childEnv, startGateway, tempDir, writeJson } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { runCli } from './helpers/cli.js';
import { runCliWithInput } from './helpers/cli-input.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, clusterStatus, getEntity } from './helpers/admin.js';
import { BOUNDED } from './helpers/wait.js';

test('the CLI writes drafts from a file and from stdin, lists, gets, dry-runs, publishes, shows history and rolls back, printing the JSON bodies', { timeout: 180_000 }, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY, { id: 'reader', scopes: ['config:read', 'publish:read'] }] });
  const dir = tempDir(t);
  const flags = ['--admin', gw.adminUrl, '--token', gw.tokens.root!];
  // The other half of the calls take the admin URL and token from the environment.
  const env = { SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: gw.tokens.root! };
  const ok = (r: { code: number | null; stdout: string; stderr: string }, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);

  // config set -f <file>
  const clusterFile = writeJson(join(dir, 'cluster.json'), { targets: [up.target] });
  const setCluster = await runCli(['config', 'set', 'cluster', 'api', '-f', clusterFile, ...flags]);
  ok(setCluster, 'config set -f');
  assert.deepEqual(Object.keys(setCluster.json).sort(), ['generation', 'logicalAddress']);
  assert.equal(setCluster.json.generation, 0);
  assert.equal(setCluster.json.logicalAddress, (await getEntity(gw, 'cluster', 'api')).logicalAddress, 'the same receipt as REST');

  // config set from stdin (no -f, and -f -)
  const route = { cluster: 'api', pathPrefix: '/api', order: 10 };
  const setRoute = await runCliWithInput(['config', 'set', 'route', 'api'], JSON.stringify(route), { env });
  ok(setRoute, 'config set from stdin');
  assert.equal(setRoute.json.generation, 0);
  const ping = { pathPrefix: '/ping', directResponse: { statusCode: 200, body: 'pong' } };
  ok(await runCliWithInput(['config', 'set', 'route', 'ping', '-f', '-'], JSON.stringify(ping), { env }), 'config set -f -');
  assert.deepEqual((await getEntity(gw, 'route', 'api')).draft?.doc, route, 'the document read from stdin was stored');

  // A document of the wrong shape: 400 Svc.Config.Invalid with field paths, exit 2.
  const bad = await runCliWithInput(['config', 'set', 'cluster', 'broken'], JSON.stringify({ targets: 'nope' }), { env });
  assert.equal(bad.code, 2, bad.stdout);
  assert.equal(bad.json.code, 'Svc.Config.Invalid');
  assert.ok(bad.json.errors.some((e: { path: string }) => e.path === '/targets'), JSON.stringify(bad.json.errors));
  // Input that is not JSON: exit 2 without a call.
  const notJson = await runCliWithInput(['config', 'set', 'cluster', 'broken'], '{not json', { env });
  assert.equal(notJson.code, 2, notJson.stdout);

  // config list / get
  const list = await runCli(['config', 'list', 'route'], { env });
  ok(list, 'config list');
  assert.equal(list.json.kind, 'route');
  assert.deepEqual(list.json.items.map((i: { name: string; state: string }) => [i.name, i.state]), [['api', 'draft'], ['ping', 'draft']]);
  const get = await runCli(['config', 'get', 'route', 'api', ...flags]);
  ok(get, 'config get');
  assert.equal(get.json.state, 'draft');
  assert.deepEqual(get.json.draft.doc, route);
  assert.equal(get.json.published, null);
  const missing = await runCli(['config', 'get', 'route', 'nope', ...flags]);
  assert.equal(missing.code, 2);
  assert.equal(missing.json.code, 'Svc.Config.NotFound');

  // publish dry-run: exit 0 and the body; with a read-only key too (dry-run is a read).
  const dry = await runCli(['publish', 'dry-run', '--admin', gw.adminUrl, '--token', gw.tokens.reader!]);
  ok(dry, 'publish dry-run');
  assert.deepEqual(dry.json, { success: true, candidateGeneration: 1, issues: [], warnings: [], planned: ['cluster/api', 'route/api', 'route/ping'] });
  assert.equal((await request(`${gw.dataUrl}/ping`)).status, 503, 'the dry-run published nothing');
  const denied = await runCli(['publish', 'go', '--admin', gw.adminUrl, '--token', gw.tokens.reader!]);
  assert.equal(denied.code, 2, 'publish go needs publish:write');
  assert.equal(denied.json.code, 'Svc.Auth.Scope');

  // publish go
  const go = await runCli(['publish', 'go'], { env });
  ok(go, 'publish go');
  assert.deepEqual(go.json, { ok: true, generation: 1, planned: ['cluster/api', 'route/api', 'route/ping'], warnings: [] });
  assert.equal((await request(`${gw.dataUrl}/ping`)).text, 'pong');
  assert.equal((await request(`${gw.dataUrl}/api/v?x=1`)).json.url, '/api/v?x=1');

  // A rejected candidate: dry-run and go both exit 2 with the 422 body; nothing changes.
  ok(await runCliWithInput(['config', 'set', 'route', 'ping'], JSON.stringify({ ...ping, steps: [{ code: 'no-such-step' }] }), { env }), 'config set bad step');
  const dryBad = await runCli(['publish', 'dry-run', ...flags]);
  assert.equal(dryBad.code, 2, dryBad.stdout);
  assert.equal(dryBad.json.code, 'Svc.Publish.Rejected');
  assert.equal(dryBad.json.success, false);
  assert.equal(dryBad.json.candidateGeneration, 2);
  assert.equal(dryBad.json.issues[0].code, 'Compile.Step.Unknown');
  const goBad = await runCli(['publish', 'go', ...flags]);
  assert.equal(goBad.code, 2, goBad.stdout);
  assert.equal(goBad.json.code, 'Svc.Publish.Rejected');
  assert.equal(goBad.json.ok, false);
  assert.equal((await clusterStatus(gw)).generation, 1);
  assert.equal((await request(`${gw.dataUrl}/ping`)).text, 'pong');

  // Fix it, publish generation 2, then history and rollback.
  ok(await runCliWithInput(['config', 'set', 'route', 'ping'], JSON.stringify({ ...ping, directResponse: { statusCode: 200, body: 'pong 2' } }), { env }), 'config set');
  const go2 = await runCli(['publish', 'go', ...flags]);
  ok(go2, 'publish go 2');
  assert.deepEqual(go2.json, { ok: true, generation: 2, planned: ['route/ping'], warnings: [] });
  assert.equal((await request(`${gw.dataUrl}/ping`)).text, 'pong 2');

  const hist = await runCli(['publish', 'history'], { env });
  ok(hist, 'publish history');
  assert.equal(hist.json.current, 2);
  assert.deepEqual(hist.json.items.map((i: { generation: number }) => i.generation).sort(), [1, 2]);
  // The REST limit is a CLI flag too (it had none).
  const newest = await runCli(['publish', 'history', '--limit', '1'], { env });
  ok(newest, 'publish history --limit 1');
  assert.deepEqual(newest.json.items.map((i: { generation: number }) => i.generation), [2]);

  const rb = await runCli(['publish', 'rollback', '1', ...flags]);
  ok(rb, 'publish rollback');
  assert.equal(rb.json.ok, true);
  assert.equal(rb.json.generation, 3);
  assert.deepEqual(rb.json.planned, ['route/ping']);
  assert.equal((await request(`${gw.dataUrl}/ping`)).text, 'pong');
  const rbMissing = await runCli(['publish', 'rollback', '42', ...flags]);
  assert.equal(rbMissing.code, 2);
  assert.equal(rbMissing.json.code, 'Svc.Publish.NotFound');

  // config delete stages a removal; the next publish applies it.
  const del = await runCli(['config', 'delete', 'route', 'ping', ...flags]);
  ok(del, 'config delete');
  assert.equal(del.json.pending, 'delete');
  assert.equal((await request(`${gw.dataUrl}/ping`)).text, 'pong');
  const go4 = await runCli(['publish', 'go'], { env });
  assert.deepEqual(go4.json, { ok: true, generation: 4, planned: ['route/ping'], warnings: [] });
  assert.equal((await request(`${gw.dataUrl}/ping`)).status, 404);

  // Nothing to publish.
  const empty = await runCli(['publish', 'go'], { env });
  ok(empty, 'empty publish');
  assert.deepEqual(empty.json, { ok: true, generation: 4, planned: [], warnings: [] });
});

test('CLI admin commands exit 2 on a 4xx and print the error envelope', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const env = { SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: gw.tokens.root! };
  const badName = await runCliWithInput(['config', 'set', 'route', 'bad name!'], '{}', { env });
  assert.equal(badName.code, 2, badName.stdout);
  assert.equal(typeof badName.json.code, 'string');
  const unauth = await runCli(['publish', 'dry-run'], { env: { ...env, SWITCHYARD_TOKEN: 'x'.repeat(40) } });
  assert.equal(unauth.code, 2, unauth.stdout);
  assert.equal(unauth.json.code, 'Svc.Auth.Unauthenticated');
});

test('CLI arguments and flags the CLI cannot use exit 2, like every other unusable input, and call nothing', BOUNDED, async () => {
  // Regression: a value refused by an integer argument's parser (`publish rollback abc`)
  // exited 1, the code of an unexpected failure; missing arguments already exited 2.
  const env = { SWITCHYARD_ADMIN: 'http://127.0.0.1:1' }; // nothing listens: a call would exit 4
  for (const args of [
    ['publish', 'rollback', 'abc'],
    ['publish', 'rollback', '0'],
    ['audit', 'list', '--limit', 'many'],
    ['key', 'issue', '--name', 'k1', '--scope', 'config:read', '--ttl', '0'],
    ['config', 'set', 'pipeline', 'x'],
    ['config', 'get', 'route'],
  ]) {
    const r = await runCli(args, { env });
    assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /\S/, `${args.join(' ')}: says what is wrong`);
  }
});

test('config set waits for a document that arrives late on stdin', BOUNDED, async (t) => {
  // Regression: stdin was read with readFileSync(0), which throws EAGAIN when the program
  // feeding the pipe has not written yet: `(sleep 1; cat doc) | switchyard config set …` exited 2.
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const env = childEnv({ SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: gw.tokens.root! });
  for (const args of [['config', 'set', 'cluster', 'late'], ['config', 'set', 'cluster', 'late2', '-f', '-']]) {
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const p = spawn(process.execPath, [RUN_JS, ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      p.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      p.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
      p.stdin.on('error', () => {});
      setTimeout(() => p.stdin.end(JSON.stringify({ targets: ['127.0.0.1:3000'] })), 1_000);
      p.on('close', (code) => resolve({ code, out }));
    });
    assert.equal(r.code, 0, `${args.join(' ')}: exit ${r.code}\n${r.out}`);
  }
});

test('an --admin that is no http(s) URL is unusable input (exit 2), not an unreachable port (exit 4)', BOUNDED, async () => {
  for (const admin of ['127.0.0.1:9180', 'localhost:9180', 'ftp://127.0.0.1:9180']) {
    const r = await runCli(['publish', 'history'], { env: { SWITCHYARD_ADMIN: admin } });
    assert.equal(r.code, 2, `${admin}: exit ${r.code}\n${r.stdout}`);
    assert.equal(r.json.code, 'Cli.Input');
  }
});
