import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as v from 'valibot';
import { contentHash } from '../../src/steps/packages/content-hash.js';
import { loadPackageSteps, loadStepRegistry, resolvePackageDirs } from '../../src/steps/packages/load-packages.js';
import { adaptPackageStep } from '../../src/steps/packages/package-step.js';
import { definitionProblems } from '../../src/steps/packages/check-definition.js';
import { StepStates } from '../../src/worker/step-states.js';
import { StepRegistry } from '../../src/steps/step-registry.js';
import { BUILTIN_STEPS } from '../../src/steps/registry.js';
import { withTraceId } from '../../src/steps/reply.js';
import { compile } from '../../src/compiler/compile.js';
import { WorkerContext } from '../../src/worker/worker-context.js';
import type { FromWorker, ToWorker } from '../../src/contracts/ipc.js';
import type { StepDefinition as PackageStep } from '../../src/sdk/step.js';
import type { StepEnv } from '../../src/steps/step.js';
import type { DraftRow } from '../../src/contracts/entities.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/step-packages/', import.meta.url));
const GATEKEEPER = join(FIXTURES, 'gatekeeper');

function tempPackage(t: { after(fn: () => void): void }, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sy-steppkg-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), body);
  }
  return dir;
}

test('content hash: the package files in sorted order; node_modules and dot-folders are left out', (t) => {
  const dir = tempPackage(t, { 'package.json': '{"name":"a","version":"1.0.0"}', 'index.js': 'export default 1', 'lib/x.js': 'x' });
  const first = contentHash(dir);
  assert.match(first, /^[0-9a-f]{64}$/);
  mkdirSync(join(dir, 'node_modules', 'dep'), { recursive: true });
  writeFileSync(join(dir, 'node_modules', 'dep', 'index.js'), 'changed');
  mkdirSync(join(dir, '.git'), { recursive: true });
  writeFileSync(join(dir, '.git', 'HEAD'), 'ref');
  assert.equal(contentHash(dir), first, 'node_modules and .git do not count');
  writeFileSync(join(dir, 'lib', 'x.js'), 'y');
  const changed = contentHash(dir);
  assert.notEqual(changed, first, 'a changed file changes the hash');
  writeFileSync(join(dir, 'lib', 'x.js'), 'x');
  assert.equal(contentHash(dir), first, 'the same content, the same hash');
  writeFileSync(join(dir, 'lib', 'y.js'), '');
  assert.notEqual(contentHash(dir), first, 'an added file changes the hash');
});

test('loading the fixture package: three steps adapted, with their origin, schema, statuses and clusters', async () => {
  const steps = await loadPackageSteps([GATEKEEPER]);
  assert.deepEqual(steps.map((s) => s.code), ['header-gate', 'cluster-call', 'secret-echo']);
  const gate = steps[0]!;
  assert.deepEqual({ ...gate.origin, hash: gate.origin!.hash.length }, { package: 'sy-fixture-gatekeeper', version: '1.2.0', hash: 64 });
  assert.equal(gate.origin!.hash, contentHash(GATEKEEPER));
  assert.equal(gate.pure, true);
  assert.equal(gate.timeoutMs, 30_000);
  assert.deepEqual(gate.statuses, [{ status: 401, when: 'the header is missing or has another value (`Gate.Closed`)' }]);
  assert.equal(v.safeParse(gate.schema, gate.example).success, true);
  assert.deepEqual(steps[1]!.clusterRefs!({ cluster: 'auth', path: '/' }), [{ pointer: '/cluster', name: 'auth' }]);
  assert.deepEqual(steps[2]!.envRefs!({ name: 'X' }), [{ pointer: '/name', name: 'X' }]);
});

test('a package whose code is a built-in’s, or another package’s, is refused; so is a missing one', async (t) => {
  await assert.rejects(loadStepRegistry({ dirs: [join(FIXTURES, 'clashes-builtin')], tenants: {} }), /step echo of package sy-fixture-clashes-builtin has the code of a built-in step/);
  await assert.rejects(loadStepRegistry({ dirs: [GATEKEEPER, GATEKEEPER], tenants: {} }), /step header-gate of package sy-fixture-gatekeeper has the code of a step of package sy-fixture-gatekeeper/);
  assert.throws(() => resolvePackageDirs(['sy-no-such-package'], FIXTURES), /sy-no-such-package is not installed/);
  assert.throws(() => resolvePackageDirs(['./nowhere'], FIXTURES), /\.\/nowhere is not a folder with a package\.json/);
  assert.deepEqual(resolvePackageDirs(['./gatekeeper', GATEKEEPER], FIXTURES), [GATEKEEPER, GATEKEEPER]);
  const bad = tempPackage(t, {
    'package.json': '{"name":"bad-steps","version":"0.1.0","type":"module"}',
    'index.js': "export default { code: 'Bad_Code', summary: 'x', settings: {}, answers: [{ status: 401, code: 'Svc.Mine', when: 'x' }], create() {} };",
  });
  await assert.rejects(loadPackageSteps([bad]), (err: Error) => {
    assert.match(err.message, /^step package bad-steps \(.*\): step Bad_Code: /);
    assert.match(err.message, /code "Bad_Code" must match/);
    assert.match(err.message, /settings must be a valibot schema/);
    assert.match(err.message, /Svc\. and Compile\. codes are the gateway's own/);
    return true;
  });
});

test('a definition whose example does not pass its settings schema is refused', () => {
  const def = { code: 'ex-bad', summary: 's', settings: v.strictObject({ n: v.number() }), answers: [], example: { n: 'one' }, create: () => () => undefined };
  assert.deepEqual(definitionProblems(def).map((p) => p.split(':')[0]), ['example does not pass the settings schema']);
  assert.deepEqual(definitionProblems({ ...def, example: { n: 1 } }), []);
});

const QUIET: StepEnv = { rateLimits: { acquire: () => true, remaining: () => 0 }, traceId: () => '', log: { info() {}, warn() {} } };
const ORIGIN = { package: 'p', version: '1.0.0', hash: 'a'.repeat(64) };

test('adapter: the handler is the package’s own, answers are envelopes built once, secrets and clusters only as declared', async () => {
  let env: Parameters<PackageStep['create']>[1] | null = null;
  const handler = () => undefined;
  const def: PackageStep<{ name: string }> = {
    code: 'adapted',
    summary: 's',
    settings: v.strictObject({ name: v.string() }),
    answers: [{ status: 403, code: 'Pkg.No', when: 'never allowed' }],
    secrets: (s) => [{ pointer: '/name', name: s.name }],
    clusters: () => [{ pointer: '/c', name: 'declared' }],
    timeoutMs: 50_000 as number,
    create(_s, e) {
      env = e;
      return handler;
    },
  };
  const step = adaptPackageStep(def as PackageStep, ORIGIN);
  assert.equal(step.timeoutMs, 30_000, 'capped');
  const run = step.create!({ name: 'SY_UNIT_SECRET' }, { bucket: 'acme/r#/steps/0@{}', tenant: 'acme', env: QUIET, state: new StepStates().of('acme/r#/steps/0@{}') });
  assert.equal(run, handler, 'no wrapper per request');
  const e = env!;
  assert.equal(e.tenant, 'acme');
  assert.equal(e.route, 'acme/r');
  process.env.SY_UNIT_SECRET = 's3';
  assert.equal(e.secret('SY_UNIT_SECRET'), 's3');
  delete process.env.SY_UNIT_SECRET;
  assert.throws(() => e.secret('PATH'), /secret PATH is not one its secrets\(settings\) declares/);
  await assert.rejects(e.request('other', { path: '/' }), /cluster other is not one its clusters\(settings\) declares/);
  await assert.rejects(e.request('declared', { path: '/' }), /no cluster connections here/);
  const a = e.answer('Pkg.No');
  assert.equal(e.answer('Pkg.No'), a, 'the declared answer is built once');
  assert.equal(a.status, 403);
  assert.deepEqual(JSON.parse(withTraceId(a, 'tr-1') as string), { code: 'Pkg.No', message: 'never allowed', traceId: 'tr-1' });
  assert.deepEqual(JSON.parse(withTraceId(e.answer('Pkg.No', 'not you', { 'x-why': 'x' }), 'tr-2') as string), { code: 'Pkg.No', message: 'not you', traceId: 'tr-2' });
  assert.throws(() => e.answer('Pkg.Undeclared'), /answer Pkg.Undeclared is not one its answers declare/);
  const state = e.state(() => ({ n: 0 }));
  state.n++;
  assert.equal(e.state(() => ({ n: 0 })).n, 1, 'the same object per bucket');
});

test('steps.tenants: an unlisted code is the default tenant’s only; a listed one its tenants’ (or every tenant’s with *)', async () => {
  const steps = await loadStepRegistry({ dirs: [GATEKEEPER], tenants: { 'header-gate': ['acme'], 'cluster-call': ['*'] } });
  const drafts = (code: string, settings: object): DraftRow[] => [
    { kind: 'cluster', name: 'auth', doc: { targets: ['127.0.0.1:1'] } },
    { kind: 'route', name: 'r', doc: { cluster: 'auth', hosts: ['a.example'], steps: [{ code, settings }] } },
  ];
  const issues = (tenant: string, code: string, settings: object) => compile({ tenant, published: [], drafts: drafts(code, settings) }, undefined, { steps }).issues.map((i) => [i.code, i.pointer]);
  assert.deepEqual(issues('acme', 'header-gate', { header: 'x', value: 'y' }), []);
  assert.deepEqual(issues('globex', 'header-gate', { header: 'x', value: 'y' }), [['Compile.Step.NotAllowed', '/steps/0/code']]);
  assert.deepEqual(issues('globex', 'cluster-call', { cluster: 'auth', path: '/' }), []);
  assert.deepEqual(issues('globex', 'secret-echo', { name: 'X' }), [['Compile.Step.NotAllowed', '/steps/0/code']]);
  assert.deepEqual(issues('acme', 'header-gate', { header: 'x' }), [['Compile.Step.Settings', '/steps/0/settings/value']]);
  const ok = compile({ tenant: 'acme', published: [], drafts: drafts('header-gate', { header: 'x', value: 'y' }) }, undefined, { steps });
  assert.ok(ok.ok);
  assert.deepEqual(ok.generation.stepBuilds, { 'header-gate': steps.get('header-gate')!.origin }, 'the generation carries the build of the package step it uses');
  assert.deepEqual(steps.catalog('globex').filter((s) => s.package).map((s) => s.code), ['cluster-call']);
  assert.deepEqual(steps.catalog('default').filter((s) => s.package).map((s) => [s.code, s.package, s.version]), [
    ['cluster-call', 'sy-fixture-gatekeeper', '1.2.0'],
    ['secret-echo', 'sy-fixture-gatekeeper', '1.2.0'],
  ]);
});

test('a worker that loaded another build of a package step nacks the generation, naming the step and both builds', async () => {
  const sent: FromWorker[] = [];
  const ctx = new WorkerContext((m) => sent.push(m));
  const steps = await loadStepRegistry({ dirs: [GATEKEEPER], tenants: {} });
  const init: Extract<ToWorker, { type: 'init' }> = {
    type: 'init',
    slot: 0,
    listen: { host: '127.0.0.1', port: 1 },
    generation: null,
    logLevel: 'silent',
    graceMs: 10,
    dataPlane: {
      paths: { escapedSlashes: 'reject', mergeSlashes: true },
      trustedProxies: [],
      upstreams: { allow: [], deny: [], tenants: {}, admin: { host: '127.0.0.1', port: 2 }, data: { host: '127.0.0.1', port: 1 } },
      limits: {} as never,
      engine: 'node',
      tlsProtocols: ['http/1.1'],
      h2c: false,
      observe: { metrics: false, requestId: null, accessLog: null, tracing: null },
    },
  };
  ctx.start(init, steps);
  const gen = compile(
    {
      tenant: 'default',
      published: [],
      drafts: [
        { kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } },
        { kind: 'route', name: 'gated', doc: { cluster: 'c', steps: [{ code: 'header-gate', settings: { header: 'x', value: 'y' } }] } },
      ],
    },
    undefined,
    { steps },
  );
  assert.ok(gen.ok);
  ctx.swap(1, gen.generation);
  assert.deepEqual(sent.at(-1), { type: 'ack', generation: 1 }, 'the same build: accepted');
  const other = { package: 'sy-fixture-gatekeeper', version: '1.2.1', hash: 'b'.repeat(64) };
  ctx.swap(2, { ...gen.generation, stepBuilds: { 'header-gate': other } });
  const nack = sent.at(-1) as Extract<FromWorker, { type: 'nack' }>;
  assert.equal(nack.type, 'nack');
  assert.equal(nack.generation, 2);
  const mine = steps.get('header-gate')!.origin!;
  assert.equal(
    nack.error.message,
    `step header-gate: the generation was compiled with sy-fixture-gatekeeper@1.2.1 (${'b'.repeat(12)}), this worker loaded sy-fixture-gatekeeper@1.2.0 (${mine.hash.slice(0, 12)})`,
  );
  assert.equal(ctx.current?.generation, 1, 'the accepted generation keeps serving');
  ctx.current?.retire();
});

test('a registry built in-process: a fresh import per content hash on reload', async (t) => {
  const dir = tempPackage(t, {
    'package.json': '{"name":"reloads","version":"1.0.0","type":"module"}',
    'index.js': "export default { code: 'reloading', summary: 'one', settings: { kind: 'schema', type: 'any', '~run': (d) => ({ ...d, typed: true }) }, answers: [], create: () => () => undefined };",
  });
  const steps = new StepRegistry(BUILTIN_STEPS, await loadPackageSteps([dir]), {}, () => loadPackageSteps([dir]));
  assert.equal(steps.get('reloading')!.summary, 'one');
  const before = steps.fingerprint;
  writeFileSync(join(dir, 'index.js'), "export default { code: 'reloading', summary: 'two', settings: { kind: 'schema', type: 'any', '~run': (d) => ({ ...d, typed: true }) }, answers: [], create: () => () => undefined };");
  await steps.reload();
  assert.equal(steps.get('reloading')!.summary, 'two');
  assert.notEqual(steps.fingerprint, before);
  writeFileSync(join(dir, 'index.js'), 'export default 42;');
  await assert.rejects(steps.reload(), /reloading|not a step definition/);
  assert.equal(steps.get('reloading')!.summary, 'two', 'a failed reload changes nothing');
});

test('package code reaches the compiler only through the registry: no compiler file imports steps/packages/ or the SDK', async () => {
  const { readdirSync, readFileSync } = await import('node:fs');
  const dir = fileURLToPath(new URL('../../src/compiler/', import.meta.url));
  const offenders = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .filter((f) => /from '[^']*(steps\/packages\/|\/sdk\/)[^']*'/.test(readFileSync(join(dir, f), 'utf8')));
  assert.deepEqual(offenders, []);
});
