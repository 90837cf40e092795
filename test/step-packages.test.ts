import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConfig, childEnv, exitWithin, spawnRun, startGateway, tempDir, writeJson } from './helpers/gateway.js';
import { ROOT_KEY, dryRun, publish, publishRaw, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { runCli } from './helpers/cli.js';
import { startUpstream } from './helpers/upstream.js';
import { freePorts } from './helpers/ports.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

/**
 * A step package (test/fixtures/step-packages/gatekeeper: plain JS importing switchyard/step)
 * installed through worker.json `steps.packages`, on a real gateway: listed with its schema,
 * checked at dry-run, run by the workers, explained, governed per tenant.
 */

const FIXTURES = fileURLToPath(new URL('./fixtures/step-packages/', import.meta.url));
const GATE = { code: 'header-gate', settings: { header: 'x-pass', value: 'open-sesame' } };

interface CatalogItem {
  code: string;
  package?: string;
  version?: string;
  enabled?: boolean;
  settingsSchema: { type: string; properties: Record<string, unknown>; required?: string[] };
}

test('a package step: plugin list, a 422 with a pointer, its answers on the data port, explain, request() and secret(), steps.tenants', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    env: { SY_T_PKG_SECRET: 's3cr3t' },
    edit: (c) => {
      c.steps = { packages: [join(FIXTURES, 'gatekeeper')], tenants: { 'header-gate': ['default', 'acme'], 'cluster-call': ['*'] } };
      c.secrets = { env: { default: ['SY_T_PKG_SECRET'] } };
    },
  });
  const token = gw.tokens.root!;
  const admin = (method: string, path: string, body?: unknown) => request(`${gw.adminUrl}/api/v1${path}`, { method, token, ...(body === undefined ? {} : { body }) });

  // The catalog: the default tenant sees the package's steps with their schema and origin.
  const list = await admin('GET', '/default/plugin/list');
  assert.equal(list.status, 200, list.text);
  const gate = (list.json.items as CatalogItem[]).find((i) => i.code === 'header-gate');
  assert.ok(gate, 'plugin list shows the package step');
  assert.deepEqual([gate.package, gate.version, gate.enabled], ['sy-fixture-gatekeeper', '1.2.0', true]);
  assert.equal(gate.settingsSchema.type, 'object');
  assert.deepEqual(Object.keys(gate.settingsSchema.properties).sort(), ['header', 'value']);
  const sys = await admin('GET', '/sys/steps');
  assert.equal(sys.status, 200, sys.text);
  assert.deepEqual(
    (sys.json.steps as CatalogItem[]).filter((s) => s.package).map((s) => s.code),
    ['cluster-call', 'header-gate', 'secret-echo'],
  );
  assert.equal((sys.json.steps as CatalogItem[]).find((s) => s.code === 'echo')!.package, undefined, 'a built-in has no package');
  // A tenant sees only the package steps worker.json lets it use.
  const pkgCodes = async (tenant: string) => ((await admin('GET', `/${tenant}/plugin/list`)).json.items as CatalogItem[]).filter((i) => i.package).map((i) => i.code);
  assert.deepEqual(await pkgCodes('acme'), ['cluster-call', 'header-gate']);
  assert.deepEqual(await pkgCodes('globex'), ['cluster-call']);

  // Bad settings: a 422 dry-run naming the pointer, as for a built-in.
  await setEntity(gw, 'cluster', 'up', { targets: [up.target] });
  await setEntity(gw, 'route', 'gated', { pathPrefix: '/gated', cluster: 'up', steps: [{ code: 'header-gate', settings: { header: 'x-pass' } }] });
  await setEntity(gw, 'route', 'call-nowhere', { pathPrefix: '/call-nowhere', cluster: 'up', steps: [{ code: 'cluster-call', settings: { cluster: 'nope', path: '/' } }] });
  await setEntity(gw, 'route', 'secret-other', { pathPrefix: '/secret-other', cluster: 'up', steps: [{ code: 'secret-echo', settings: { name: 'SY_T_NOT_LISTED' } }] });
  const bad = await dryRun(gw);
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(bad.json.issues.map((i) => [i.name, i.code, i.pointer]).sort(), [
    ['call-nowhere', 'Compile.Step.Cluster', '/steps/0/settings/cluster'],
    ['gated', 'Compile.Step.Settings', '/steps/0/settings/value'],
    ['secret-other', 'Compile.Step.SecretNotAllowed', '/steps/0/settings/name'],
  ]);
  await request(`${gw.adminUrl}/api/v1/default/config/delete/route/call-nowhere`, { method: 'POST', token });
  await request(`${gw.adminUrl}/api/v1/default/config/delete/route/secret-other`, { method: 'POST', token });

  // Fixed: the workers run the package's handler.
  await setEntity(gw, 'route', 'gated', { pathPrefix: '/gated', cluster: 'up', steps: [GATE] });
  await setEntity(gw, 'route', 'call', { pathPrefix: '/call', cluster: 'up', steps: [{ code: 'cluster-call', settings: { cluster: 'up', path: '/probe?x=1' } }] });
  await setEntity(gw, 'route', 'call-undeclared', { pathPrefix: '/undeclared', cluster: 'up', steps: [{ code: 'cluster-call', settings: { cluster: 'up', path: '/p', alsoTry: 'other' } }] });
  await setEntity(gw, 'route', 'secret', { pathPrefix: '/secret', cluster: 'up', steps: [{ code: 'secret-echo', settings: { name: 'SY_T_PKG_SECRET' } }] });
  await publish(gw);

  const closed = await request(`${gw.dataUrl}/gated/x`);
  assert.equal(closed.status, 401, closed.text);
  assert.equal(closed.json.code, 'Gate.Closed');
  assert.equal(closed.json.message, 'the header is missing or has another value');
  assert.equal(typeof closed.json.traceId, 'string');
  assert.ok((closed.json.traceId as string).length > 0, 'the envelope carries the request’s trace id');
  const before = up.requests.length;
  const open = await request(`${gw.dataUrl}/gated/x`, { headers: { 'x-pass': 'open-sesame' } });
  assert.equal(open.status, 200, open.text);
  assert.equal(open.json.url, '/gated/x', 'the upstream got the request');
  assert.equal(up.requests.length, before + 1);

  const called = await request(`${gw.dataUrl}/call`);
  assert.equal(called.status, 200, called.text);
  assert.match(called.text, /^cluster said 200: /);
  const probe = up.requests.find((r) => r.url === '/probe?x=1');
  assert.ok(probe, 'request() reached the tenant cluster');
  assert.equal(probe.headers['x-from'], 'default/call', 'env.route names the route');
  // The call counts in the cluster's upstream metrics as the proxied request to /gated did: 2 attempts.
  await waitFor('the sub-request counted as an upstream attempt', async () => {
    const m = (await request(`${gw.adminUrl}/metrics`, { token })).text;
    return /^switchyard_upstream_duration_seconds_count\{tenant="default",cluster="up",target="[^"]+"\} 2$/m.test(m) ? true : false;
  }, { timeoutMs: 10_000 });
  const undeclared = await request(`${gw.dataUrl}/undeclared`);
  assert.equal(undeclared.text, 'refused: step cluster-call: cluster other is not one its clusters(settings) declares');
  const secret = await request(`${gw.dataUrl}/secret`);
  assert.equal(secret.text, 'secret=s3cr3t');

  // explain: a pure package step runs on the dry request; one that calls out is at run time, named by its package.
  const explain = async (path: string, headers: Record<string, string> = {}) => {
    const e = await admin('POST', '/default/explain', { method: 'GET', url: `http://gw.test${path}`, headers });
    assert.equal(e.status, 200, e.text);
    return (e.json.route as { terminal: { steps: { code: string; verdict: string; status?: number; error?: string; reason: string }[] } }).terminal.steps[0]!;
  };
  assert.deepEqual(await explain('/gated/x').then((s) => [s.code, s.verdict, s.status, s.error]), ['header-gate', 'refuses', 401, 'Gate.Closed']);
  assert.deepEqual(await explain('/gated/x', { 'x-pass': 'open-sesame' }).then((s) => [s.code, s.verdict]), ['header-gate', 'passes']);
  const atRunTime = await explain('/call');
  assert.equal(atRunTime.verdict, 'at run time');
  assert.match(atRunTime.reason, /package sy-fixture-gatekeeper@1\.2\.0/);

  // steps.tenants: header-gate is the default tenant's and acme's (not globex's); a tenant not listed gets Compile.Step.NotAllowed.
  const tenantRoute = { hosts: ['t.example'], directResponse: { statusCode: 200, body: 'ok' }, steps: [GATE] };
  await setEntity(gw, 'route', 'gated', tenantRoute, 'globex');
  const refused = await dryRun(gw, 'globex');
  assert.equal(refused.status, 422, refused.text);
  assert.deepEqual(refused.json.issues.map((i) => [i.code, i.pointer]), [['Compile.Step.NotAllowed', '/steps/0/code']]);
  assert.match(refused.json.issues[0]!.message, /not allowed for tenant globex/);
  await setEntity(gw, 'route', 'gated', { ...tenantRoute, hosts: ['a.example'] }, 'acme');
  assert.equal((await publishRaw(gw, 'acme')).status, 200, 'a listed tenant publishes');

  // plugin disable/enable work on a package step as on a built-in.
  assert.equal((await admin('POST', '/acme/plugin/disable/header-gate')).status, 200);
  await setEntity(gw, 'route', 'gated', { ...tenantRoute, hosts: ['a.example'], order: 2 }, 'acme');
  assert.deepEqual((await dryRun(gw, 'acme')).json.issues.map((i) => i.code), ['Compile.Step.Disabled']);
  assert.equal((await admin('POST', '/acme/plugin/enable/header-gate')).status, 200);
  assert.equal((await dryRun(gw, 'acme')).status, 200);
  // A package step the tenant may not use is not one of its plugins.
  const notGlobex = await admin('POST', '/globex/plugin/disable/header-gate');
  assert.equal(notGlobex.status, 404, notGlobex.text);
  assert.equal(notGlobex.json.code, 'Svc.Plugin.NotFound');

  // The docs of the installed steps, from the same loader.
  const docs = await runCli(['step', 'docs', '--config', gw.configFile], { env: { SY_TEST_TOKEN_0: token }, timeoutMs: 60_000 });
  assert.equal(docs.code, 0, docs.stderr);
  assert.match(docs.stdout, /^# Installed step packages/);
  assert.match(docs.stdout, /## `header-gate`\n\nRefuses requests whose header does not carry the configured value\.\n\nPackage `sy-fixture-gatekeeper` 1\.2\.0, build `[0-9a-f]{12}`; usable by `default`, `acme`\./);
  assert.match(docs.stdout, /\| `value` \| string \| yes \|/);
  assert.match(docs.stdout, /- \*\*401\*\*: the header is missing or has another value \(`Gate\.Closed`\)\./);
});

test('a package step whose code is a built-in’s: run exits 10 with the bootstrap error, validate says so', BOUNDED, async (t) => {
  const [dataPort, adminPort] = await freePorts(2);
  const { config, env } = buildConfig({ dataPort: dataPort!, adminPort: adminPort!, keys: [ROOT_KEY] });
  config.steps = { packages: [join(FIXTURES, 'clashes-builtin')] };
  const file = writeJson(join(tempDir(t), 'worker.json'), config);
  const p = spawnRun(t, ['run', '--config', file], childEnv(env));
  const r = await exitWithin(p, 30_000);
  assert.equal(r.timedOut, false);
  assert.equal(r.code, 10, p.stderr());
  assert.match(p.stderr(), /step echo of package sy-fixture-clashes-builtin has the code of a built-in step/);
  assert.doesNotMatch(p.stdout(), /switchyard ready/);

  const v = await runCli(['validate', '--config', file], { env, timeoutMs: 60_000 });
  assert.equal(v.code, 10, v.stdout + v.stderr);
  assert.deepEqual(v.json.errors, [{ path: 'steps.packages', message: 'step echo of package sy-fixture-clashes-builtin has the code of a built-in step' }]);

  config.steps = { packages: ['sy-not-installed-anywhere'] };
  writeJson(file, config);
  const missing = await runCli(['validate', '--config', file], { env, timeoutMs: 60_000 });
  assert.equal(missing.code, 10);
  assert.match(missing.json.errors[0].message, /sy-not-installed-anywhere is not installed/);

  // A code in steps.tenants that no package has (a typo) is refused, not left to mean `default` only.
  config.steps = { packages: [join(FIXTURES, 'gatekeeper')], tenants: { 'hedaer-gate': ['acme'] } };
  writeJson(file, config);
  const typo = await runCli(['validate', '--config', file], { env, timeoutMs: 60_000 });
  assert.equal(typo.code, 10);
  assert.deepEqual(typo.json.errors, [{ path: 'steps.packages', message: 'steps.tenants names "hedaer-gate", which no installed step package has' }]);
});
