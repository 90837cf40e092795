import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway, tempDir, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, dryRun, history, listEntities, publish, setEntity } from './helpers/admin.js';
import { runCli } from './helpers/cli.js';
import { request } from './helpers/http.js';
import { makePki, issue } from './helpers/certs.js';
import { BOUNDED } from './helpers/wait.js';

const cli = (gw: Gateway, args: string[]) => runCli(args, { env: { SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: gw.tokens.root } });

async function upstream(t: { after(fn: () => void): void }): Promise<string> {
  const srv = createServer((req, res) => res.end(`up ${req.url} ${req.headers['x-orch'] ?? '-'}`));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.close());
  return `127.0.0.1:${(srv.address() as { port: number }).port}`;
}

/** Each route's answer (status and body), and a path no route has. */
async function replay(gw: Gateway, paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of [...paths, '/nowhere']) {
    const r = await request(`${gw.dataUrl}${p}`);
    out.push(`${p} ${r.status} ${r.text.replace(/"traceId":"[^"]*"/, '')}`); // each answer has its own id
  }
  return out;
}

test('export, wipe with an empty sync --prune, sync the export back: the same bytes, and the data port answers the same', { timeout: 180_000 }, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const target = await upstream(t);
  const pki = makePki(t);
  // 50 entities of every kind: 12 clusters, 13 orch chains, 20 routes, 5 certs.
  for (let i = 0; i < 12; i++) await setEntity(gw, 'cluster', `c${i}`, { targets: [target], timeouts: { connectMs: 1000 + i } });
  for (let i = 0; i < 13; i++) {
    await setEntity(gw, 'orch', `o${i}`, { nodes: [{ id: 'h', step: 'request-headers', settings: { set: { 'x-orch': `o${i}` } } }], links: [] });
  }
  const paths: string[] = [];
  for (let i = 0; i < 20; i++) {
    const path = `/r${i}`;
    paths.push(path);
    const doc =
      i % 2 === 0
        ? { cluster: `c${i % 12}`, pathPrefix: path, steps: [{ code: 'orch', settings: { ref: `o${i % 13}` } }] }
        : { directResponse: { statusCode: 200 + (i % 3), body: `fixed ${i}` }, pathPrefix: path, methods: ['GET'] };
    await setEntity(gw, 'route', `r${i}`, doc);
  }
  for (let i = 0; i < 5; i++) await setEntity(gw, 'cert', `k${i}`, { ...issue(pki, [`k${i}.example`]), hosts: [] });
  await publish(gw);
  const before = await replay(gw, paths);
  assert.ok(before.some((l) => l.includes('up /r0 o0')), before.join('\n'));

  const dir = tempDir(t);
  const exported = await cli(gw, ['export']);
  assert.equal(exported.code, 0, exported.stderr);
  assert.doesNotMatch(exported.stdout, /PRIVATE KEY/, 'no private key leaves the gateway');
  assert.match(exported.stdout, /privateKey: \(write-only\)/);
  const file = join(dir, 'state.yaml');
  writeFileSync(file, exported.stdout);
  const again = await cli(gw, ['export']);
  assert.equal(again.stdout, exported.stdout, 'the same state exports to the same bytes');

  const empty = join(dir, 'empty.yaml');
  writeFileSync(empty, 'version: 1\n');
  // Certs cannot come back from the export without their keys: keep them, wipe the rest.
  const certsOnly = join(dir, 'certs.yaml');
  writeFileSync(certsOnly, exported.stdout.replace(/^clusters:[\s\S]*?^certs:/m, 'certs:'));
  const wiped = await cli(gw, ['sync', '-f', certsOnly, '--prune', '--publish']);
  assert.equal(wiped.code, 0, wiped.stdout + wiped.stderr);
  assert.equal((wiped.json as { counts: { delete: number } }).counts.delete, 45);
  assert.ok((await replay(gw, paths)).slice(0, 20).every((l) => / 404 /.test(l)), 'every route is gone');

  const restored = await cli(gw, ['sync', '-f', file, '--publish']);
  assert.equal(restored.code, 0, restored.stdout + restored.stderr);
  assert.equal((restored.json as { counts: { create: number; unchanged: number } }).counts.create, 45);
  assert.equal((await cli(gw, ['export'])).stdout, exported.stdout, 'the restored state exports to the same bytes');
  assert.deepEqual(await replay(gw, paths), before, 'the data port answers as before');

  // The empty file, pruning: every entity would go, and a dry run says so without doing it.
  const wouldWipe = await cli(gw, ['sync', '-f', empty, '--prune', '--dry-run']);
  assert.equal(wouldWipe.code, 0, wouldWipe.stdout + wouldWipe.stderr);
  assert.equal((wouldWipe.json as { counts: { delete: number } }).counts.delete, 50);
  assert.equal((await cli(gw, ['export'])).stdout, exported.stdout, 'the dry run changed nothing');
});

test('diff: one changed field is one update with its pointer, exit 0 when equal and 1 when not; a bad file is refused by path and changes nothing', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await setEntity(gw, 'cluster', 'api', { targets: ['127.0.0.1:9'] });
  await setEntity(gw, 'route', 'api', { cluster: 'api', pathPrefix: '/api' });
  await publish(gw);
  const dir = tempDir(t);
  const file = join(dir, 'state.yaml');
  writeFileSync(file, (await cli(gw, ['export'])).stdout);

  const same = await cli(gw, ['diff', '-f', file]);
  assert.equal(same.code, 0, same.stdout + same.stderr);
  assert.equal((same.json as { changed: boolean }).changed, false);

  writeFileSync(file, readFileSync(file, 'utf8').replace('pathPrefix: /api', 'pathPrefix: /v2'));
  const changed = await cli(gw, ['diff', '-f', file]);
  assert.equal(changed.code, 1, changed.stdout + changed.stderr);
  const items = (changed.json as { items: { kind: string; name: string; action: string; changes?: unknown[] }[] }).items;
  assert.deepEqual(
    items.filter((i) => i.action !== 'unchanged'),
    [{ kind: 'route', name: 'api', action: 'update', changes: [{ pointer: '/pathPrefix', old: '/api', new: '/v2' }] }],
  );
  const published = await cli(gw, ['diff', '-f', file, '--against', 'published']);
  assert.equal(published.code, 1);

  for (const [bad, path] of [
    [readFileSync(file, 'utf8').replace('pathPrefix: /v2', 'pathPrefix: /v2\n    colour: blue'), '/routes/api/colour'],
    [readFileSync(file, 'utf8').replace('pathPrefix: /v2', 'pathPrefix: 42'), '/routes/api/pathPrefix'],
    [readFileSync(file, 'utf8') + 'extra: 1\n', '/extra'],
  ] as const) {
    writeFileSync(file, bad);
    for (const cmd of [['diff', '-f', file], ['sync', '-f', file, '--publish']]) {
      const r = await cli(gw, cmd);
      assert.equal(r.code, 2, `${cmd[0]}: ${r.stdout}`);
      const env = r.json as { code: string; errors: { path: string }[] };
      assert.equal(env.code, 'Svc.Config.Invalid');
      assert.ok(env.errors.some((e) => e.path === path), `${cmd[0]} names ${path}: ${r.stdout}`);
    }
  }
  const drafts = await listEntities(gw, 'route');
  assert.ok(drafts.items.every((i) => i.state === 'published'), 'nothing was applied');

  // A cert only the drafts hold: its exported "(write-only)" key is the drafted one, diffed against what serves.
  await setEntity(gw, 'cert', 'www', { ...issue(makePki(t), ['www.example']), hosts: [] });
  writeFileSync(file, (await cli(gw, ['export'])).stdout);
  const withCert = await cli(gw, ['diff', '-f', file, '--against', 'published']);
  assert.equal(withCert.code, 1, withCert.stdout + withCert.stderr);
  const cert = (withCert.json as { items: { kind: string; name: string; action: string }[] }).items.find((i) => i.kind === 'cert');
  assert.deepEqual(cert && [cert.name, cert.action], ['www', 'create']);
  assert.doesNotMatch(withCert.stdout, /PRIVATE KEY/);
});

test('sync is all or nothing: a file whose compile fails with --publish leaves drafts and generation; two syncs of one file make one generation', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const dir = tempDir(t);
  const good = join(dir, 'good.yaml');
  writeFileSync(good, 'version: 1\nroutes:\n  ping:\n    pathPrefix: /ping\n    directResponse: { statusCode: 200, body: pong }\n');
  const first = await cli(gw, ['sync', '-f', good, '--publish']);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  const second = await cli(gw, ['sync', '-f', good, '--publish']);
  assert.equal(second.code, 0, second.stdout + second.stderr);
  assert.equal((second.json as { changed: boolean }).changed, false);
  assert.equal((await history(gw)).items.length, 1, 'one generation for two syncs of the same file');
  assert.equal((await request(`${gw.dataUrl}/ping`)).text, 'pong');

  const broken = join(dir, 'broken.yaml');
  writeFileSync(broken, 'version: 1\nclusters:\n  new: { targets: ["127.0.0.1:9"] }\nroutes:\n  ping:\n    pathPrefix: /ping\n    cluster: missing\n');
  const r = await cli(gw, ['sync', '-f', broken, '--publish', '--prune']);
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.equal((r.json as { code: string }).code, 'Svc.Publish.Rejected');
  const clusters = await listEntities(gw, 'cluster');
  assert.deepEqual(clusters.items, [], 'the new cluster of the refused sync is not a draft');
  const routes = await listEntities(gw, 'route');
  assert.deepEqual(routes.items.map((i) => [i.name, i.state]), [['ping', 'published']]);
  assert.equal((await history(gw)).items.length, 1, 'no generation');

  const dry = await cli(gw, ['sync', '-f', broken, '--publish', '--dry-run']);
  assert.equal(dry.code, 0, dry.stdout + dry.stderr);
  const verdict = (dry.json as { publish: { success: boolean; issues: { code: string }[] } }).publish;
  assert.equal(verdict.success, false);
  assert.ok(verdict.issues.some((i) => i.code === 'Compile.Route.Cluster'));
  assert.deepEqual((await listEntities(gw, 'cluster')).items, [], 'a dry run applies nothing');

  // A key without publish:write may sync drafts but not publish them.
  const issued = await cli(gw, ['key', 'issue', '--name', 'drafts-only', '--scope', 'config:read,config:write']);
  const token = (issued.json as { token: string }).token;
  const denied = await runCli(['sync', '-f', good, '--publish'], { env: { SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: token } });
  assert.equal((denied.json as { code: string }).code, 'Svc.Auth.Scope');
});

test('dry-run explains what would do nothing: a shadowed route, an unused cluster, an unused chain, steps on a route that answers by itself', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const dir = tempDir(t);
  const file = join(dir, 'crafted.yaml');
  writeFileSync(
    file,
    [
      'version: 1',
      'clusters:',
      '  api: { targets: ["127.0.0.1:9"] }',
      '  spare: { targets: ["127.0.0.1:9"] }',
      '  shadow: { targets: ["127.0.0.1:9"] }',
      'orchs:',
      '  used: { nodes: [{ id: a, step: request-headers, settings: { set: { x-a: "1" } } }, { id: b, step: orch, settings: { ref: inner } }], links: [] }',
      '  inner: { nodes: [{ id: m, step: mirror, settings: { cluster: shadow, percent: 10 } }], links: [] }',
      '  orphan: { nodes: [{ id: c, step: request-headers, settings: { set: { x-c: "1" } } }], links: [] }',
      'routes:',
      '  all: { cluster: api, pathPrefix: /api, order: 10, steps: [{ code: orch, settings: { ref: used } }] }',
      '  users: { cluster: api, pathPrefix: /api/users, methods: [GET] }',
      '  other-host: { cluster: api, pathPrefix: /api/users, hosts: [x.example], order: 20 }',
      '  fixed: { directResponse: { statusCode: 200 }, pathPrefix: /fixed, steps: [{ code: request-headers, settings: { set: { x-b: "1" } } }] }',
    ].join('\n') + '\n',
  );
  const r = await cli(gw, ['sync', '-f', file, '--publish', '--dry-run']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const warnings = (r.json as { publish: { success: boolean; warnings: { code: string; kind: string; name: string }[] } }).publish;
  assert.equal(warnings.success, true, 'warnings stop nothing');
  assert.deepEqual(
    warnings.warnings.map((w) => `${w.code} ${w.kind}/${w.name}`).sort(),
    ['Compile.Cluster.Unused cluster/spare', 'Compile.Orch.Unused orch/orphan', 'Compile.Route.Shadowed route/users', 'Compile.Route.StepsIgnored route/fixed'],
  );
  const go = await cli(gw, ['sync', '-f', file, '--publish']);
  assert.equal(go.code, 0, go.stdout + go.stderr);
  assert.equal((go.json as { publish: { warnings: unknown[] } }).publish.warnings.length, 4, 'the publish answers them too');

  // A planned route that outranks served ones says whose requests it takes; the shadowed route serves none.
  await setEntity(gw, 'route', 'beta', { cluster: 'api', pathPrefix: '/api/users/beta', order: 30 });
  const plan = await dryRun(gw);
  const moved = plan.json.warnings.filter((w) => w.code === 'Compile.Route.TakesOver');
  assert.deepEqual(moved.map((w) => `${w.name}: ${w.message}`).sort(), [
    'beta: takes over requests route all serves now: paths under "/api/users/beta"',
    'beta: takes over requests route other-host serves now: paths under "/api/users/beta" on x.example',
  ]);
  await setEntity(gw, 'route', 'beta', { cluster: 'api', pathPrefix: '/beta', order: 30 });
  assert.deepEqual((await dryRun(gw)).json.warnings.filter((w) => w.code === 'Compile.Route.TakesOver'), [], 'a route no served route overlaps takes nothing');
});

test('a sync --publish --prune queued behind another publish plans against the drafts written while it waited', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const state = { version: 1, routes: { ping: { pathPrefix: '/ping', directResponse: { statusCode: 200, body: 'pong' } } } };
  for (let round = 0; round < 5; round++) {
    await setEntity(gw, 'route', `busy${round}`, { pathPrefix: `/busy${round}`, directResponse: { statusCode: 200 } });
    // A publish that holds the queue, the sync behind it, and a draft written in between.
    const first = publish(gw);
    const synced = request(`${gw.adminUrl}/api/v1/default/sync`, { method: 'POST', token: gw.tokens.root, body: { state, prune: true, publish: true } });
    const late = setEntity(gw, 'route', `late${round}`, { pathPrefix: `/late${round}`, directResponse: { statusCode: 200, body: 'late' } });
    await Promise.all([first, late]);
    const s = await synced;
    assert.equal(s.status, 200, s.text);
    // Whenever the late draft landed, the sync never publishes it: it was pruned, or it waits as a draft.
    assert.equal((await request(`${gw.dataUrl}/late${round}`)).status, 404, `round ${round}: ${s.text}`);
  }
});
