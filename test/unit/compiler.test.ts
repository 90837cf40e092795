import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { compile } from '../../src/compiler/compile.js';
import { BUILTIN_STEPS } from '../../src/steps/registry.js';
import { StepRegistry } from '../../src/steps/step-registry.js';
import type { StepDefinition } from '../../src/steps/step.js';
import type { DraftRow, EntityRow } from '../../src/contracts/entities.js';

const cluster = (name: string): DraftRow => ({ kind: 'cluster', name, doc: { targets: ['127.0.0.1:1'] } });
const route = (name: string, doc: Record<string, unknown>): DraftRow => ({ kind: 'route', name, doc });
const orch = (name: string, nodes: { id: string; step: string; settings?: unknown }[], links: { from: string; to: string }[] = []): DraftRow => ({
  kind: 'orch',
  name,
  doc: { nodes, links },
});
const run = (drafts: DraftRow[], published: EntityRow[] = [], tenant = 'default') => compile({ tenant, published, drafts });
const codes = (r: ReturnType<typeof run>) => r.issues.map((i) => i.code).sort();

test('a cluster route compiles with its steps and the planned list', () => {
  const r = run([cluster('c'), route('r', { cluster: 'c', pathPrefix: '/a', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 1, burst: 3 } }] })]);
  assert.equal(r.ok, true);
  assert.deepEqual(r.planned, ['cluster/c', 'route/r']);
  if (!r.ok) return;
  const [rt] = r.generation.tenants.default!.routes;
  assert.equal(rt!.terminal.type, 'cluster');
  assert.equal(rt!.pathPrefix, '/a');
  assert.deepEqual(r.generation.clusters['default/c']!.targets, ['127.0.0.1:1']);
});

test('unknown step code and bad rate-limit settings are issues with pointers', () => {
  const r = run([
    cluster('c'),
    route('a', { cluster: 'c', steps: [{ code: 'nope' }] }),
    route('b', { cluster: 'c', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 'x', burst: 3 } }] }),
  ]);
  assert.equal(r.ok, false);
  assert.deepEqual(codes(r), ['Compile.Step.Settings', 'Compile.Step.Unknown']);
  const settings = r.issues.find((i) => i.code === 'Compile.Step.Settings')!;
  assert.equal(settings.name, 'b');
  assert.equal(settings.pointer, '/steps/0/settings/requestsPerSecond');
  assert.equal(r.issues.find((i) => i.code === 'Compile.Step.Unknown')!.pointer, '/steps/0/code');
});

test('zero or two terminals, and a missing cluster, are issues', () => {
  assert.deepEqual(codes(run([route('r', { pathPrefix: '/' })])), ['Compile.Route.Terminal']);
  assert.deepEqual(codes(run([cluster('c'), route('r', { cluster: 'c', directResponse: { statusCode: 200 } })])), ['Compile.Route.Terminal']);
  assert.deepEqual(codes(run([route('r', { cluster: 'ghost' })])), ['Compile.Route.Cluster']);
});

test('orch chains: depth 4 passes, depth 5 fails; cycles and missing refs fail', () => {
  const ref = (to: string) => ({ id: 'n', step: 'orch', settings: { ref: to } });
  const leaf = orch('e', [{ id: 'n', step: 'rate-limit', settings: { requestsPerSecond: 1, burst: 1 } }]);
  const chain4 = [orch('a', [ref('b')]), orch('b', [ref('c')]), orch('c', [ref('d')]), orch('d', [{ id: 'n', step: 'rate-limit', settings: { requestsPerSecond: 1, burst: 1 } }])];
  const r4 = run([cluster('c'), route('r', { cluster: 'c', steps: [{ code: 'orch', settings: { ref: 'a' } }] }), ...chain4]);
  assert.equal(r4.ok, true, JSON.stringify(r4.issues));
  const chain5 = [orch('a', [ref('b')]), orch('b', [ref('c')]), orch('c', [ref('d')]), orch('d', [ref('e')]), leaf];
  const r5 = run([cluster('c'), route('r', { cluster: 'c', steps: [{ code: 'orch', settings: { ref: 'a' } }] }), ...chain5]);
  assert.deepEqual(codes(r5), ['Compile.Orch.Depth']);
  const cyc = run([cluster('c'), route('r', { cluster: 'c', steps: [{ code: 'orch', settings: { ref: 'x' } }] }), orch('x', [ref('y')]), orch('y', [ref('x')])]);
  assert.ok(codes(cyc).includes('Compile.Orch.Cycle'));
  const missing = run([cluster('c'), route('r', { cluster: 'c', steps: [{ code: 'orch', settings: { ref: 'none' } }] })]);
  assert.deepEqual(codes(missing), ['Compile.Orch.Missing']);
});

test('an inline step and the same step bound through a chain compile to the same runtime step', () => {
  const rl = { requestsPerSecond: 2, burst: 5 };
  const inline = run([cluster('c'), route('r', { cluster: 'c', steps: [{ code: 'rate-limit', settings: rl }] })]);
  const bound = run([cluster('c'), route('r', { cluster: 'c', steps: [{ code: 'orch', settings: { ref: 'o' } }] }), orch('o', [{ id: 'n', step: 'rate-limit', settings: rl }])]);
  assert.ok(inline.ok && bound.ok);
  const steps = (r: typeof inline) => (r.ok && r.generation.tenants.default!.routes[0]!.terminal.type === 'cluster' ? r.generation.tenants.default!.routes[0]!.terminal.steps : []);
  const strip = (s: ReturnType<typeof steps>) => s.map((x) => (x.kind === 'step' ? { code: x.code, settings: x.settings } : x));
  assert.deepEqual(strip(steps(inline)), strip(steps(bound)));
});

test('chain nodes run in link order', () => {
  const r = run([
    cluster('c'),
    route('r', { cluster: 'c', steps: [{ code: 'orch', settings: { ref: 'o' } }] }),
    orch(
      'o',
      [
        { id: 'second', step: 'rate-limit', settings: { requestsPerSecond: 2, burst: 2 } },
        { id: 'first', step: 'rate-limit', settings: { requestsPerSecond: 1, burst: 1 } },
      ],
      [{ from: 'first', to: 'second' }],
    ),
  ]);
  assert.ok(r.ok, JSON.stringify(r.issues));
  const t = r.generation.tenants.default!.routes[0]!.terminal;
  assert.ok(t.type === 'cluster');
  assert.deepEqual(t.steps.map((s) => (s.kind === 'step' ? (s.settings as { burst: number }).burst : 0)), [1, 2]);
});

test('routes are ranked by order, then longer prefix, then name', () => {
  const r = run([
    route('b', { directResponse: { statusCode: 200 }, pathPrefix: '/a' }),
    route('a', { directResponse: { statusCode: 200 }, pathPrefix: '/a' }),
    route('long', { directResponse: { statusCode: 200 }, pathPrefix: '/a/b' }),
    route('top', { directResponse: { statusCode: 200 }, order: 5 }),
  ]);
  assert.ok(r.ok);
  assert.deepEqual(r.generation.tenants.default!.routes.map((x) => x.name), ['top', 'long', 'a', 'b']);
});

test('a non-default tenant must declare hosts; a host claimed by two tenants is an issue', () => {
  assert.deepEqual(codes(run([route('r', { directResponse: { statusCode: 200 } })], [], 'acme')), ['Compile.Route.Hosts']);
  const published: EntityRow[] = [{ tenant: 'default', kind: 'route', name: 'x', doc: { directResponse: { statusCode: 200 }, hosts: ['shop.example'] } }];
  assert.deepEqual(codes(run([route('r', { directResponse: { statusCode: 200 }, hosts: ['shop.example'] })], published, 'acme')), ['Compile.Route.HostConflict']);
  const ok = run([route('r', { directResponse: { statusCode: 200 }, hosts: ['acme.example'] })], published, 'acme');
  assert.ok(ok.ok);
  assert.equal(ok.generation.hostOwners['acme.example'], 'acme');
});

test('drafts equal to the published document and deletes of nothing plan nothing', () => {
  const doc = { targets: ['127.0.0.1:1'] };
  const published: EntityRow[] = [{ tenant: 'default', kind: 'cluster', name: 'c', doc }];
  const r = run([{ kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } }, { kind: 'route', name: 'gone', doc: null }], published);
  assert.ok(r.ok);
  assert.deepEqual(r.planned, []);
  const del = run([{ kind: 'cluster', name: 'c', doc: null }], published);
  assert.deepEqual(del.planned, ['cluster/c']);
});

test('deleting a cluster a route still uses is an issue', () => {
  const published: EntityRow[] = [
    { tenant: 'default', kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } },
    { tenant: 'default', kind: 'route', name: 'r', doc: { cluster: 'c' } },
  ];
  assert.deepEqual(codes(run([{ kind: 'cluster', name: 'c', doc: null }], published)), ['Compile.Route.Cluster']);
});

test('every registered step: an unknown setting is a compile issue pointing into that step', async () => {
  for (const def of BUILTIN_STEPS.values()) {
    const r = run([cluster('c'), route('r', { cluster: 'c', steps: [{ code: def.code, settings: { ...def.example, bogus: true } }] })]);
    assert.equal(r.ok, false, def.code);
    const issue = r.issues.find((i) => i.code === 'Compile.Step.Settings');
    assert.ok(issue, `${def.code}: ${JSON.stringify(r.issues)}`);
    assert.ok(issue.pointer.startsWith('/steps/0/settings'), `${def.code}: ${issue.pointer}`);
  }
});

test('settings a step cannot be built from are a compile issue, not workers failing a committed generation', () => {
  // Regression: two bot-detection patterns, each valid alone, were joined into one RegExp in
  // every worker ("Duplicate capture group name"): the publish committed, every worker
  // failed to build it, and the data port went down for all routes.
  const bad = run([cluster('c'), route('r', { cluster: 'c', steps: [{ code: 'bot-detection', settings: { deny: ['(?<name>crawler)', '(?<name>spider)'] } }] })]);
  assert.equal(bad.ok, true, 'the step now tests each pattern on its own, so these settings are fine');

  // A factory that throws, whatever the reason, is reported at its settings with its message.
  const throws: StepDefinition = { code: 'throws-when-built', summary: 'test', statuses: [], example: {}, schema: v.object({}), create: () => { throw new Error('no such key'); } };
  const steps = new StepRegistry(BUILTIN_STEPS, [throws]);
  const r = compile({ tenant: 'default', published: [], drafts: [cluster('c'), route('r', { cluster: 'c', steps: [{ code: 'throws-when-built', settings: {} }] })] }, undefined, { steps });
  assert.equal(r.ok, false);
  assert.deepEqual(r.issues.map((i) => [i.code, i.pointer, i.message]), [['Compile.Step.Settings', '/steps/0/settings', 'throws-when-built: cannot be built: no such key']]);
});

test('a name under another tenant’s wildcard is a host conflict, reported on the publishing tenant’s route', () => {
  // Regression: only equal strings clashed, so beta could publish api.example.com while
  // acme served *.example.com, and the exact name took acme's traffic for that host.
  const acme: EntityRow[] = [{ tenant: 'acme', kind: 'route', name: 'all', doc: { directResponse: { statusCode: 200 }, hosts: ['*.example.com'] } }];
  const grab = run([route('grab', { directResponse: { statusCode: 200 }, hosts: ['api.example.com'] })], acme, 'beta');
  assert.deepEqual(grab.issues.map((i) => [i.code, i.name]), [['Compile.Route.HostConflict', 'grab']]);
  const wider = run([route('grab', { directResponse: { statusCode: 200 }, hosts: ['*.api.example.com'] })], acme, 'beta');
  assert.deepEqual(codes(wider), ['Compile.Route.HostConflict']);
  const beta: EntityRow[] = [{ tenant: 'beta', kind: 'route', name: 'one', doc: { directResponse: { statusCode: 200 }, hosts: ['api.example.com'] } }];
  const cover = run([route('all', { directResponse: { statusCode: 200 }, hosts: ['*.example.com'] })], beta, 'acme');
  assert.deepEqual(cover.issues.map((i) => [i.code, i.name]), [['Compile.Route.HostConflict', 'all']], 'a wildcard over a name already served');
  assert.ok(run([route('own', { directResponse: { statusCode: 200 }, hosts: ['example.com', 'api.example.org'] })], acme, 'beta').ok, 'the bare suffix and other domains are not covered');
  // Claims among other tenants were accepted when they published: they do not block a third.
  const both = [...acme, ...beta];
  assert.ok(run([route('r', { directResponse: { statusCode: 200 }, pathPrefix: '/x' })], both, 'default').ok);
});

test('a tenant’s disabled steps are issues in that tenant’s publish only', () => {
  // Regression: acme disabling request-id, used by its own published route, made every
  // other tenant's dry-run and publish fail with acme's issue.
  const published: EntityRow[] = [
    { tenant: 'acme', kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } },
    { tenant: 'acme', kind: 'route', name: 'r', doc: { cluster: 'c', hosts: ['acme.example'], steps: [{ code: 'request-id' }] } },
  ];
  const disabled = { acme: ['request-id'] };
  const other = compile({ tenant: 'default', published, drafts: [route('d', { directResponse: { statusCode: 200 } })], disabled });
  assert.ok(other.ok, JSON.stringify(other.issues));
  const own = compile({ tenant: 'acme', published, drafts: [], disabled });
  assert.deepEqual(codes(own), ['Compile.Step.Disabled']);
});

test('a ring of six chains is a cycle, whatever the depth limit', () => {
  // Regression: the cycle walk stopped at depth 4, so a→b→c→d→e→f→a compiled (unreferenced) or
  // was reported only as too deep.
  const names = ['a', 'b', 'c', 'd', 'e', 'f'];
  const drafts = names.map((n, i) => orch(n, [{ id: 'n', step: 'orch', settings: { ref: names[(i + 1) % names.length]! } }]));
  const r = run([cluster('c'), ...drafts]);
  assert.equal(r.ok, false);
  assert.ok(codes(r).includes('Compile.Orch.Cycle'), JSON.stringify(r.issues));
  const cycle = r.issues.find((i) => i.code === 'Compile.Orch.Cycle')!;
  assert.equal(cycle.pointer, '/nodes/0/settings/ref');
  assert.match(cycle.message, /a -> b -> c -> d -> e -> f -> a/);
});

test('patterns run in linear time: exponential shapes compile; backreferences and lookaround are compile issues', () => {
  const safe = run([
    cluster('c'),
    route('r', { cluster: 'c', steps: [
      { code: 'path-rewrite', settings: { regex: { pattern: '^/api/([a-z0-9]+)+/v1$', replacement: '/x' } } },
      { code: 'bot-detection', settings: { deny: ['ok', '(\\w+\\s?)*$'] } },
    ] }),
  ]);
  assert.deepEqual(safe.issues, []);
  const r = run([
    cluster('c'),
    route('r', { cluster: 'c', steps: [
      { code: 'path-rewrite', settings: { regex: { pattern: '^/(\\w+)/\\1$', replacement: '/x' } } },
      { code: 'bot-detection', settings: { deny: ['ok', 'bot(?!tle)'] } },
    ] }),
  ]);
  assert.deepEqual(r.issues.map((i) => [i.code, i.pointer]).sort(), [['Compile.Step.Settings', '/steps/0/settings/regex/pattern'], ['Compile.Step.Settings', '/steps/1/settings/deny/1']]);
  assert.match(r.issues.find((i) => i.pointer.endsWith('deny/1'))!.message, /uses a feature RE2 does not support: negative lookahead/);
});

test('jwt-auth naming an unset secretEnv is a compile issue, not a route refusing every token', () => {
  // Regression: it published, and every request got 401.
  delete process.env.SY_UNIT_UNSET_SECRET;
  const drafts = [cluster('c'), route('r', { cluster: 'c', steps: [{ code: 'jwt-auth', settings: { algorithms: ['HS256'], secretEnv: 'SY_UNIT_UNSET_SECRET' } }] })];
  const r = compile({ tenant: 'default', published: [], drafts, secrets: { env: { default: ['SY_UNIT_UNSET_SECRET'] }, reserved: [] } });
  assert.deepEqual(r.issues.map((i) => [i.code, i.pointer]), [['Compile.Step.Settings', '/steps/0/settings']]);
  assert.match(r.issues[0]!.message, /SY_UNIT_UNSET_SECRET \(secretEnv\) is not set/);
});

test('regression: a group’s members compile in nodes[] order, whatever order the group lists them in', () => {
  const doc = {
    nodes: [
      { id: 'one', step: 'request-headers', settings: { set: { 'x-who': 'one' } } },
      { id: 'two', step: 'request-headers', settings: { set: { 'x-who': 'two' } } },
    ],
    links: [],
    groups: [{ id: 'g', nodes: ['two', 'one'], merge: 'all' }],
  };
  const r = run([cluster('c'), { kind: 'orch', name: 'ch', doc }, route('r', { cluster: 'c', steps: [{ code: 'orch', settings: { ref: 'ch' } }] })]);
  assert.equal(r.ok, true, JSON.stringify(r.issues));
  if (!r.ok) return;
  const terminal = r.generation.tenants.default!.routes[0]!.terminal as { steps: unknown[] };
  const [step] = terminal.steps as { kind: string }[];
  assert.equal(step!.kind, 'group');
  const members = (step as { members: { settings: { set: Record<string, string> } }[][] }).members;
  assert.deepEqual(members.map((m) => m[0]!.settings.set['x-who']), ['one', 'two']);
});

test('a pathPrefix must be in normal form: a non-normal one is an issue that names the normal form', () => {
  const r = run([cluster('c'), route('a', { cluster: 'c', pathPrefix: '/%61dmin/./x' }), route('b', { cluster: 'c', pathPrefix: '/a%2Fb' }), route('d', { cluster: 'c', pathPrefix: '//d' }), route('ok', { cluster: 'c', pathPrefix: '/caf%C3%A9/' })]);
  const found = r.issues.filter((i) => i.code === 'Compile.Route.PathPrefix').map((i) => `${i.name} ${i.pointer} ${i.message}`);
  assert.equal(found.length, 3, JSON.stringify(r.issues));
  assert.match(found[0]!, /^a \/pathPrefix .*write "\/admin\/x"/);
  assert.match(found[1]!, /^b \/pathPrefix .*encoded slash/);
  assert.match(found[2]!, /^d \/pathPrefix .*write "\/d"/);
});

const KEY = { code: 'key-auth', settings: { keys: [{ id: 'k', sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' }] } };

test('warnings: a protected case-sensitive prefix whose upper-case variant reaches an unprotected route', () => {
  const r = run([cluster('app'), route('admin', { cluster: 'app', pathPrefix: '/admin-api', order: 10, steps: [KEY] }), route('all', { cluster: 'app' })]);
  assert.ok(r.ok, JSON.stringify(r.issues));
  assert.deepEqual(r.warnings, [
    { kind: 'route', name: 'admin', pointer: '/caseSensitive', code: 'Compile.Route.CaseVariant', message: '`/ADMIN-API` reaches route all without auth; set caseSensitive: false if the upstream ignores case' },
  ]);
  // None: the route compares without case, or the variant reaches a protected route or a fixed answer, or nothing.
  const quiet = [
    [route('admin', { cluster: 'app', pathPrefix: '/admin-api', order: 10, caseSensitive: false, steps: [KEY] }), route('all', { cluster: 'app' })],
    [route('admin', { cluster: 'app', pathPrefix: '/admin-api', order: 10, steps: [KEY] }), route('all', { cluster: 'app', steps: [KEY] })],
    [route('admin', { cluster: 'app', pathPrefix: '/admin-api', order: 10, steps: [KEY] }), route('all', { directResponse: { statusCode: 404 } })],
    [route('admin', { cluster: 'app', pathPrefix: '/admin-api', order: 10, steps: [KEY] }), route('other', { cluster: 'app', pathPrefix: '/public' })],
    [route('admin', { cluster: 'app', pathPrefix: '/admin-api', order: 10, steps: [KEY], hosts: ['a.test'] }), route('all', { cluster: 'app', hosts: ['b.test'] })],
    [route('numbers', { cluster: 'app', pathPrefix: '/2024/', order: 10, steps: [KEY] }), route('all', { cluster: 'app' })],
  ];
  for (const routes of quiet) {
    const q = run([cluster('app'), ...routes]);
    assert.ok(q.ok, JSON.stringify(q.issues));
    assert.deepEqual(q.warnings, [], JSON.stringify(routes));
  }
  // Auth inside an orch chain counts; a hosts wildcard overlaps its names.
  const viaChain = run([
    cluster('app'),
    orch('guard', [{ id: 'k', step: 'key-auth', settings: KEY.settings }]),
    route('admin', { cluster: 'app', pathPrefix: '/admin-api', order: 10, hosts: ['api.example.com'], steps: [{ code: 'orch', settings: { ref: 'guard' } }] }),
    route('all', { cluster: 'app', hosts: ['*.example.com'] }),
  ]);
  assert.ok(viaChain.ok, JSON.stringify(viaChain.issues));
  assert.equal(viaChain.warnings.length, 1, JSON.stringify(viaChain.warnings));
});

test('rate-limit scope cluster compiles only on a gateway with worker.json redis', () => {
  const drafts = [
    { kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } },
    { kind: 'route', name: 'r', doc: { cluster: 'c', pathPrefix: '/', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 1, burst: 1, scope: 'cluster' } }] } },
  ] as DraftRow[];
  const without = compile({ tenant: 'default', published: [], drafts, redis: false });
  assert.equal(without.ok, false);
  assert.deepEqual(without.issues.map((i) => [i.code, i.pointer]), [['Compile.Step.Settings', '/steps/0/settings/scope']]);
  assert.equal(compile({ tenant: 'default', published: [], drafts, redis: true }).ok, true);
  const node = drafts.map((d) => (d.kind === 'route' ? { ...d, doc: { cluster: 'c', pathPrefix: '/', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 1, burst: 1 } }] } } : d));
  assert.equal(compile({ tenant: 'default', published: [], drafts: node, redis: false }).ok, true, 'scope node needs nothing');
});

test('a step\'s timeoutMs: an integer 1..30000 on a route\'s step or an orch node, compiled into the runtime step; refused elsewhere with its pointer', () => {
  const ok = run([
    cluster('c'),
    orch('chain', [{ id: 'n', step: 'echo', settings: {}, timeoutMs: 30_000 } as never]),
    route('r', { cluster: 'c', steps: [{ code: 'rate-limit', timeoutMs: 1, settings: { requestsPerSecond: 1, burst: 3 } }, { code: 'orch', settings: { ref: 'chain' } }] }),
  ]);
  assert.equal(ok.ok, true, JSON.stringify(ok.issues));
  if (!ok.ok) return;
  const t = ok.generation.tenants.default!.routes[0]!.terminal;
  assert.ok(t.type === 'cluster');
  assert.deepEqual(t.steps.map((s) => (s.kind === 'step' ? [s.code, s.timeoutMs] : null)), [['rate-limit', 1], ['echo', 30_000]]);
  assert.equal((t.steps[0] as { bucket: string }).bucket.includes('timeoutMs'), false, 'the budget is not part of the state key');

  for (const bad of [0, 30_001, 1.5, '100']) {
    const r = run([cluster('c'), route('r', { cluster: 'c', steps: [{ code: 'echo', timeoutMs: bad }] })]);
    assert.equal(r.ok, false, `timeoutMs ${bad}`);
    assert.deepEqual(r.issues.map((i) => i.pointer), ['/steps/0/timeoutMs'], `timeoutMs ${bad}`);
  }
  const node = run([cluster('c'), orch('chain', [{ id: 'n', step: 'echo', settings: {}, timeoutMs: 0 } as never]), route('r', { cluster: 'c', steps: [{ code: 'orch', settings: { ref: 'chain' } }] })]);
  assert.equal(node.ok, false);
  assert.deepEqual(node.issues.filter((i) => i.kind === 'orch').map((i) => [i.name, i.pointer]), [['chain', '/nodes/0/timeoutMs']]);
  const binding = run([cluster('c'), orch('chain', [{ id: 'n', step: 'echo' }]), route('r', { cluster: 'c', steps: [{ code: 'orch', timeoutMs: 100, settings: { ref: 'chain' } }] })]);
  assert.deepEqual(binding.issues.map((i) => [i.code, i.pointer]), [['Compile.Step.Settings', '/steps/0/timeoutMs']], 'a binding has no budget of its own');
});
