import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineStep, v } from '../../src/sdk/step.js';
import { checkSettings, stepTester, StepSettingsError, TestStates } from '../../src/sdk/testing.js';
import { StepCompiler } from '../../src/compiler/step-compiler.js';
import { BUILTIN_STEPS } from '../../src/steps/registry.js';
import type { CompileIssue } from '../../src/contracts/generation.js';

// A step that uses every part of the env: a header check with a declared answer, an owned
// header, a secret, a cluster, state, response hooks, a body read.
const sample = defineStep({
  code: 'sample',
  summary: 'a step for the tester',
  settings: v.strictObject({
    header: v.optional(v.pipe(v.string(), v.minLength(1)), 'x-key'),
    keyEnv: v.optional(v.string()),
    cluster: v.optional(v.string()),
    maxBody: v.optional(v.number(), 16),
    broken: v.optional(v.boolean()),
  }),
  answers: [
    { status: 400, code: 'Sample.Missing', when: 'the header is missing' },
    { status: 413, code: 'Sample.TooLarge', when: 'the body is too large' },
  ],
  secrets: (s) => (s.keyEnv ? [{ pointer: '/keyEnv', name: s.keyEnv }] : []),
  clusters: (s) => (s.cluster ? [{ pointer: '/cluster', name: s.cluster }] : []),
  ownedHeaders: () => ['x-sample-user'],
  create(s, env) {
    if (s.broken) throw new Error('broken on purpose');
    const missing = env.answer('Sample.Missing');
    const counter = env.state(() => ({ seen: 0 }));
    return async (flow) => {
      counter.seen++;
      const value = flow.req.header(s.header);
      if (!value) return missing;
      if (flow.req.method === 'POST') {
        try {
          flow.vars.body = (await flow.readBody(s.maxBody)).toString();
        } catch {
          return env.answer('Sample.TooLarge', `over ${s.maxBody} bytes`, { 'x-limit': String(s.maxBody) });
        }
      }
      if (s.keyEnv) flow.setHeader('x-key-matches', String(env.secret(s.keyEnv) === value));
      if (s.cluster) {
        const r = await env.request(s.cluster, { method: 'post', path: '/who', headers: { 'X-Key': value } });
        flow.setHeader('x-sample-user', r.body.toString());
      }
      env.log.info({ value }, 'passed');
      flow.path = `/v2${flow.path}`;
      flow.addResponseHeader('x-first', '1');
      flow.onResponse((head) => head.headers.push(['x-second', String(head.headers.length)]));
      return undefined;
    };
  },
});

test('settings are refused with the pointers and words publish gives (Compile.Step.Settings)', () => {
  const bad = { header: '', extra: true };
  const issues = checkSettings(sample, bad);
  assert.deepEqual(
    issues.map((i) => [i.pointer, i.code]),
    [
      ['/settings/header', 'Compile.Step.Settings'],
      ['/settings/extra', 'Compile.Step.Settings'],
    ],
  );
  assert.match(issues[1]!.message, /^sample: unknown setting$/);
  assert.throws(
    () => stepTester(sample, bad),
    (err: unknown) => err instanceof StepSettingsError && err.issues.length === 2 && /\/settings\/extra: sample: unknown setting/.test(err.message),
  );
  assert.deepEqual(checkSettings(sample, {}), []);

  // The same schema through the compiler: a built-in's, so the compiler knows it.
  const builtin = BUILTIN_STEPS.get('method-restriction')!;
  const asPackage = { ...sample, code: 'method-restriction', settings: builtin.schema };
  const settings = { allow: ['get', 3], more: 1 };
  const issuesOut: CompileIssue[] = [];
  new StepCompiler('default', new Set(), new Map(), issuesOut, []).compile([{ code: 'method-restriction', settings }], { kind: 'route', name: 'r' }, '/steps', 'default/r');
  const compiled = issuesOut.map((i) => [i.pointer.replace(/^\/steps\/0/, ''), i.code, i.message]);
  assert.ok(compiled.length >= 2, JSON.stringify(compiled));
  assert.deepEqual(
    checkSettings(asPackage, settings).map((i) => [i.pointer, i.code, i.message]),
    compiled,
  );
});

test('a create that throws is a settings issue, as the trial build at publish makes it', () => {
  assert.throws(
    () => stepTester(sample, { broken: true }),
    (err: unknown) => err instanceof StepSettingsError && err.issues[0]!.pointer === '/settings' && err.issues[0]!.message === 'sample: cannot be built: broken on purpose',
  );
});

test("a declared answer is the gateway's envelope with its status; an undeclared one throws", async () => {
  const t = stepTester(sample, {}, { traceId: 'abc' });
  const r = await t.run({ path: '/a' });
  assert.ok(r.answered);
  assert.equal(r.answered.status, 400);
  assert.equal(r.answered.header('content-type'), 'application/json');
  assert.deepEqual(r.answered.json(), { code: 'Sample.Missing', message: 'the header is missing', traceId: 'abc' });
  assert.equal(r.answered.served, false);
  assert.throws(() => r.response(), /answered 400/);

  const big = await t.run({ method: 'POST', path: '/a', headers: { 'X-Key': 'k' }, body: 'x'.repeat(17) });
  assert.equal(big.answered?.status, 413);
  assert.equal(big.answered?.header('x-limit'), '16');
  assert.equal(big.answered?.json<{ message: string }>().message, 'over 16 bytes');

  const rogue = defineStep({ ...sample, code: 'rogue', create: (_s, env) => (() => env.answer('Rogue.Nope')) });
  await assert.rejects(stepTester(rogue, {}).run({ path: '/' }), /answer Rogue.Nope is not declared/);
});

test('the upstream request shows the edits, and the client never sends an owned header', async () => {
  const t = stepTester(sample, {});
  const r = await t.run({ path: '/a?b=1', headers: { 'x-key': 'k', 'X-Sample-User': 'forged', accept: ['a', 'b'] } });
  assert.equal(r.answered, null);
  assert.deepEqual(r.upstream, { method: 'GET', path: '/v2/a', query: 'b=1', headers: { 'x-key': 'k', accept: 'a, b' } });
  assert.deepEqual(t.logs, [{ level: 'info', obj: { value: 'k' }, msg: 'passed' }]);
});

test('response hooks and added headers run in registration order on a given head', async () => {
  const r = await stepTester(sample, {}).run({ path: '/', headers: { 'x-key': 'k' } });
  const head = r.response({ status: 201, headers: { 'Content-Type': 'text/plain' } });
  assert.equal(head.status, 201);
  assert.deepEqual(head.headers, [
    ['content-type', 'text/plain'],
    ['x-first', '1'],
    ['x-second', '2'],
  ]);
});

test('secrets: a declared name reads the option map, any other throws', async () => {
  const t = stepTester(sample, { keyEnv: 'SAMPLE_KEY' }, { secrets: { SAMPLE_KEY: 'k' } });
  assert.equal((await t.run({ path: '/', headers: { 'x-key': 'k' } })).upstream.headers['x-key-matches'], 'true');
  assert.equal((await t.run({ path: '/', headers: { 'x-key': 'j' } })).upstream.headers['x-key-matches'], 'false');
  const sneaky = defineStep({ ...sample, code: 'sneaky', create: (_s, env) => () => void env.secret('HOME') });
  await assert.rejects(stepTester(sneaky, {}).run({ path: '/' }), /secret HOME is not one its secrets\(settings\) declares/);
});

test('clusters: a declared one is answered by its fake and the call is recorded; another throws', async () => {
  const t = stepTester(sample, { cluster: 'users' }, { clusters: { users: (req) => ({ body: `user-of-${req.headers['x-key']}` }) } });
  const r = await t.run({ path: '/', headers: { 'x-key': 'k', 'x-sample-user': 'forged' } });
  assert.equal(r.upstream.headers['x-sample-user'], 'user-of-k');
  assert.deepEqual(t.calls, [{ cluster: 'users', request: { method: 'POST', path: '/who', headers: { 'x-key': 'k' }, body: Buffer.alloc(0) } }]);
  const wanders = defineStep({ ...sample, code: 'wanders', create: (_s, env) => () => env.request('elsewhere', { path: '/' }).then(() => undefined) });
  await assert.rejects(stepTester(wanders, {}).run({ path: '/' }), /cluster elsewhere is not one its clusters\(settings\) declares/);
});

test('state: kept across builds with the same settings, fresh when they change', async () => {
  const states = new TestStates();
  const first = stepTester(sample, {}, { states });
  await first.run({ path: '/' });
  await first.run({ path: '/' });
  const again = stepTester(sample, {}, { states });
  await again.run({ path: '/' });
  assert.deepEqual(again.state(), { seen: 3 });
  const changed = stepTester(sample, { header: 'x-other' }, { states });
  await changed.run({ path: '/' });
  assert.deepEqual(changed.state(), { seen: 1 });
});

test('the request: query pairs and cookies through the worker parsers, a body read within its limit', async () => {
  const reader = defineStep({
    code: 'reader',
    summary: 'reads',
    settings: v.object({}),
    answers: [],
    create: () => async (flow) => {
      flow.vars.q = flow.req.queryPairs.map((p) => `${p.name}=${p.value}`);
      flow.vars.cookie = flow.req.cookie('ab');
      flow.vars.body = (await flow.readBody(10)).toString();
      flow.vars.client = flow.req.clientAddress;
      return undefined;
    },
  });
  const r = await stepTester(reader, {}).run({ method: 'post', path: '/x', query: { a: ['1', '2'] }, headers: { cookie: 'ab=B; z=1' }, body: 'hello', clientAddress: '10.0.0.9' });
  assert.deepEqual(r.vars, { q: ['a=1', 'a=2'], cookie: 'B', body: 'hello', client: '10.0.0.9' });
  assert.equal(r.upstream.method, 'POST');
  await assert.rejects(stepTester(reader, {}).run({ path: '/x', body: 'x'.repeat(11) }), /body over 10 bytes/);
});
