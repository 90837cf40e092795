import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { envelopeProblem, request } from './helpers/http.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus, deleteEntity, dryRun, getEntity, history, publish, publishRaw, setEntity, type CompileIssue, type Kind } from './helpers/admin.js';
import { BOUNDED } from './helpers/wait.js';

/** An orch chain of one node: a step, or a reference to the next chain. */
const chainTo = (ref: string) => ({ nodes: [{ id: 'n', step: 'orch', settings: { ref } }], links: [] });
const chainStep = (step: string, settings: Record<string, unknown>) => ({ nodes: [{ id: 'n', step, settings }], links: [] });
const LIMIT_ONE = { requestsPerSecond: 0.001, burst: 1 };

interface Case {
  name: string;
  /** Drafts written for the case (removed again afterwards). */
  drafts: [Kind, string, unknown][];
  /** At least one issue with this code, kind and name (and pointer, when given). */
  expect: Partial<CompileIssue> & { code: string };
}

const CASES: Case[] = [
  {
    name: 'unknown step code',
    drafts: [['route', 'bad', { pathPrefix: '/bad', cluster: 'api', steps: [{ code: 'no-such-step', settings: {} }] }]],
    expect: { kind: 'route', name: 'bad', code: 'Compile.Step.Unknown', pointer: '/steps/0/code' },
  },
  {
    name: 'rate-limit settings that fail its schema (negative rate)',
    drafts: [['route', 'bad', { pathPrefix: '/bad', cluster: 'api', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: -1, burst: 3 } }] }]],
    expect: { kind: 'route', name: 'bad', code: 'Compile.Step.Settings', pointer: '/steps/0/settings/requestsPerSecond' },
  },
  {
    name: 'rate-limit settings that fail its schema (missing burst)',
    drafts: [['route', 'bad', { pathPrefix: '/bad', cluster: 'api', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 5 } }] }]],
    expect: { kind: 'route', name: 'bad', code: 'Compile.Step.Settings' },
  },
  {
    name: 'rate-limit settings that fail its schema (unknown setting, wrong type)',
    drafts: [['route', 'bad', { pathPrefix: '/bad', cluster: 'api', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 5, burst: 'ten', extra: true } }] }]],
    expect: { kind: 'route', name: 'bad', code: 'Compile.Step.Settings' },
  },
  {
    name: 'two terminals on one route',
    drafts: [['route', 'bad', { pathPrefix: '/bad', cluster: 'api', directResponse: { statusCode: 200, body: 'x' } }]],
    expect: { kind: 'route', name: 'bad', code: 'Compile.Route.Terminal' },
  },
  {
    name: 'no terminal at all',
    drafts: [['route', 'bad', { pathPrefix: '/bad' }]],
    expect: { kind: 'route', name: 'bad', code: 'Compile.Route.Terminal' },
  },
  {
    name: 'a route naming a cluster that does not exist',
    drafts: [['route', 'bad', { pathPrefix: '/bad', cluster: 'nope' }]],
    expect: { kind: 'route', name: 'bad', code: 'Compile.Route.Cluster', pointer: '/cluster' },
  },
  {
    name: 'a route changed to point at a cluster of another tenant only',
    drafts: [['route', 'api', { pathPrefix: '/api', cluster: 'elsewhere' }]],
    expect: { kind: 'route', name: 'api', code: 'Compile.Route.Cluster' },
  },
  {
    name: 'orch nesting depth 5 (route -> c1 -> c2 -> c3 -> c4 -> c5)',
    // c1..c4 are published (depth 4 serves); c4 now refers to a fifth chain.
    drafts: [
      ['orch', 'c4', chainTo('c5')],
      ['orch', 'c5', chainStep('rate-limit', LIMIT_ONE)],
    ],
    expect: { code: 'Compile.Orch.Depth' },
  },
  {
    name: 'orch cycle (x -> y -> x)',
    drafts: [
      ['orch', 'x', chainTo('y')],
      ['orch', 'y', chainTo('x')],
      ['route', 'cyc', { pathPrefix: '/cyc', cluster: 'api', steps: [{ code: 'orch', settings: { ref: 'x' } }] }],
    ],
    expect: { code: 'Compile.Orch.Cycle' },
  },
  {
    name: 'orch self-reference',
    drafts: [
      ['orch', 'self', chainTo('self')],
      ['route', 'cyc', { pathPrefix: '/cyc', cluster: 'api', steps: [{ code: 'orch', settings: { ref: 'self' } }] }],
    ],
    expect: { code: 'Compile.Orch.Cycle' },
  },
  {
    name: 'orch reference to a chain that does not exist',
    drafts: [['route', 'dangling', { pathPrefix: '/d', cluster: 'api', steps: [{ code: 'orch', settings: { ref: 'ghost' } }] }]],
    expect: { kind: 'route', name: 'dangling', code: 'Compile.Orch.Missing', pointer: '/steps/0/settings/ref' },
  },
  {
    name: 'unknown step code inside an orch chain',
    drafts: [['orch', 'c3', chainStep('no-such-step', {})]],
    expect: { kind: 'orch', name: 'c3', code: 'Compile.Step.Unknown', pointer: '/nodes/0/step' },
  },
];

/** What the data port serves in the baseline generation; asserted after every rejection. */
async function assertBaselineServes(gw: Gateway, up: Upstream, what: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const ping = await request(`${gw.dataUrl}/ping`);
    assert.equal(`${ping.status} ${ping.text}`, '200 baseline', `${what}: /ping`);
    const before = up.requests.length;
    const api = await request(`${gw.dataUrl}/api/x?i=${i}`);
    assert.equal(api.status, 200, `${what}: /api ${api.text}`);
    assert.equal(up.requests.length, before + 1, `${what}: /api reached the upstream`);
    assert.equal((await request(`${gw.dataUrl}/bad`)).status, 404, `${what}: the rejected route does not serve`);
  }
  // The depth-4 chain (its innermost step: a burst-1 limit, already spent) still runs.
  const deep = await request(`${gw.dataUrl}/deep`);
  assert.equal(deep.status, 429, `${what}: /deep still runs the depth-4 chain: ${deep.status} ${deep.text}`);
}

test('publish is rejected with 422 on dry-run and on go for every compile issue; the previous generation keeps serving', { timeout: 180_000 }, async (t) => {
  const up = await startUpstream(t);
  // tenant-b's cluster is on loopback, which only the operator's allow-list opens to tenants.
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY], edit: (c) => void (c.upstreams = { allow: ['127.0.0.0/8'] }) });

  // Baseline: a cluster route, a fixed answer, and a route bound to a chain nested 4 deep
  // (route -> c1 -> c2 -> c3 -> c4), which passes.
  const base = await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'api', { pathPrefix: '/api', cluster: 'api' }],
    ['route', 'ping', { pathPrefix: '/ping', directResponse: { statusCode: 200, body: 'baseline' } }],
    ['orch', 'c1', chainTo('c2')],
    ['orch', 'c2', chainTo('c3')],
    ['orch', 'c3', chainTo('c4')],
    ['orch', 'c4', chainStep('rate-limit', LIMIT_ONE)],
    ['route', 'deep', { pathPrefix: '/deep', cluster: 'api', steps: [{ code: 'orch', settings: { ref: 'c1' } }] }],
  ]);
  assert.equal(base.generation, 1);
  // A cluster that exists only in another tenant: references resolve inside the tenant.
  await setEntity(gw, 'cluster', 'elsewhere', { targets: [up.target] }, 'tenant-b');
  assert.equal((await publish(gw, 'tenant-b')).generation, 2);
  const GEN = 2;
  const HISTORY = (await history(gw)).items.length; // the default tenant's: generation 1

  // The depth-4 chain runs its innermost step: one request passes, the next is limited.
  const d1 = await request(`${gw.dataUrl}/deep`);
  assert.equal(d1.status, 200, `depth 4 passes and proxies: ${d1.text}`);
  const d2 = await request(`${gw.dataUrl}/deep`);
  assert.equal(d2.status, 429, 'the rate-limit at depth 4 is live');
  await assertBaselineServes(gw, up, 'baseline');

  for (const c of CASES) {
    await t.test(c.name, async () => {
      for (const [kind, name, doc] of c.drafts) await setEntity(gw, kind, name, doc);

      const dr = await dryRun(gw);
      assert.equal(dr.status, 422, `dry-run: ${dr.text}`);
      assert.equal(envelopeProblem(dr), null, 'dry-run 422 is an envelope');
      assert.equal(dr.json.code, 'Svc.Publish.Rejected');
      assert.equal(dr.json.success, false);
      assert.equal(dr.json.candidateGeneration, GEN + 1);
      assert.ok(Array.isArray(dr.json.planned));
      for (const [kind, name] of c.drafts) assert.ok(dr.json.planned.includes(`${kind}/${name}`), `planned ${dr.json.planned} names ${kind}/${name}`);
      const match = (i: CompileIssue) => Object.entries(c.expect).every(([k, v]) => i[k as keyof CompileIssue] === v);
      assert.ok(dr.json.issues.some(match), `dry-run issues ${JSON.stringify(dr.json.issues)} include ${JSON.stringify(c.expect)}`);
      for (const i of dr.json.issues) {
        for (const f of ['kind', 'name', 'pointer', 'code', 'message'] as const) assert.equal(typeof i[f], 'string', `issue field ${f}: ${JSON.stringify(i)}`);
        assert.ok(i.pointer === '' || i.pointer.startsWith('/'), `pointer ${i.pointer} is a JSON pointer`);
      }

      const go = await publishRaw(gw);
      assert.equal(go.status, 422, `go: ${go.text}`);
      assert.equal(envelopeProblem(go), null, 'go 422 is an envelope');
      assert.equal(go.json.code, 'Svc.Publish.Rejected');
      assert.equal(go.json.ok, false);
      assert.equal(go.json.candidateGeneration, GEN + 1);
      assert.ok(go.json.issues.some(match), `go issues ${JSON.stringify(go.json.issues)} include ${JSON.stringify(c.expect)}`);

      // Nothing moved: same generation everywhere, the drafts are still drafts, same traffic.
      const st = await clusterStatus(gw);
      assert.equal(st.generation, GEN);
      for (const w of st.workers) assert.equal(w.generation, GEN, `worker ${w.slot}`);
      assert.equal((await history(gw)).items.length, HISTORY, 'no history entry for a rejected publish');
      for (const [kind, name] of c.drafts) assert.equal((await getEntity(gw, kind, name)).state, 'draft', `${kind}/${name} is still a draft`);
      await assertBaselineServes(gw, up, c.name);

      // Clean up: back to the published documents.
      for (const [kind, name] of c.drafts) {
        const e = await getEntity(gw, kind, name);
        if (e.published) await setEntity(gw, kind, name, e.published.doc);
        else await deleteEntity(gw, kind, name);
      }
      const clean = await dryRun(gw);
      assert.equal(clean.status, 200, `after cleanup: ${clean.text}`);
      assert.deepEqual(clean.json.planned, []);
    });
  }
});

// Regression: orch refs used to be followed only when a route inlined the chain, so a
// cycle or a dangling ref among unused orch entities was published without an issue.
test('orch chains with a cycle or a dangling ref are rejected even before a route uses them', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [['route', 'ping', { pathPrefix: '/ping', directResponse: { statusCode: 200, body: 'baseline' } }]]);

  await setEntity(gw, 'orch', 'x', chainTo('y'));
  await setEntity(gw, 'orch', 'y', chainTo('x'));
  const cyc = await dryRun(gw);
  assert.equal(cyc.status, 422, `a cycle among orch entities: ${cyc.text}`);
  assert.ok(cyc.json.issues.some((i) => i.code === 'Compile.Orch.Cycle'), JSON.stringify(cyc.json.issues));
  await deleteEntity(gw, 'orch', 'x');
  await deleteEntity(gw, 'orch', 'y');

  await setEntity(gw, 'orch', 'z', chainTo('ghost'));
  const dangling = await dryRun(gw);
  assert.equal(dangling.status, 422, `an orch entity referring to a missing chain: ${dangling.text}`);
  assert.ok(dangling.json.issues.some((i) => i.code === 'Compile.Orch.Missing' && i.kind === 'orch' && i.name === 'z'), JSON.stringify(dangling.json.issues));
  assert.equal((await publishRaw(gw)).status, 422);
  assert.equal((await clusterStatus(gw)).generation, 1);
});
