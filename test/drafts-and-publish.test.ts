import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import {
  ROOT_KEY,
  clusterStatus,
  apply,
  deleteEntity,
  deleteEntityRaw,
  dryRun,
  getEntity,
  getEntityRaw,
  history,
  listEntities,
  publish,
  rollback,
  rollbackRaw,
  setEntity,
  waitForWorkersAt,
} from './helpers/admin.js';
import { BOUNDED } from './helpers/wait.js';

const text = async (gw: Gateway, path: string) => {
  const r = await request(`${gw.dataUrl}${path}`);
  return `${r.status} ${r.text}`;
};

const pingRoute = (body: string) => ({ pathPrefix: '/ping', order: 5, directResponse: { statusCode: 200, body } });

test('config set answers a receipt: a stable logicalAddress per address and the current published generation', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });

  const a1 = await setEntity(gw, 'cluster', 'api', { targets: ['127.0.0.1:1'] });
  assert.match(a1.logicalAddress, /^\S+$/, 'logicalAddress is a non-empty string');
  assert.equal(a1.generation, 0, 'nothing published yet');
  const a2 = await setEntity(gw, 'cluster', 'api', { targets: ['127.0.0.1:2'] });
  assert.equal(a2.logicalAddress, a1.logicalAddress, 'same tenant/kind/name, same logicalAddress (whatever the document)');

  const others = [
    await setEntity(gw, 'cluster', 'api2', { targets: ['127.0.0.1:1'] }),
    await setEntity(gw, 'route', 'api', pingRoute('x')),
    await setEntity(gw, 'cluster', 'api', { targets: ['127.0.0.1:1'] }, 'other-tenant'),
  ];
  assert.equal(new Set([a1.logicalAddress, ...others.map((o) => o.logicalAddress)]).size, 4, 'another name, kind or tenant: another address');

  const pub = await publish(gw);
  assert.equal(pub.generation, 1);
  const a3 = await setEntity(gw, 'route', 'api', pingRoute('y'));
  assert.equal(a3.generation, 1, 'a receipt carries the published generation the draft was written against');
  assert.equal(a3.logicalAddress, others[1]!.logicalAddress, 'still the same address after a publish');
  assert.equal((await getEntity(gw, 'route', 'api')).logicalAddress, a3.logicalAddress, 'config get reports the same address');
});

test('drafts do not serve; dry-run has no side effects; publish serves them as generation +1 and lists planned kind/name', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });

  await setEntity(gw, 'cluster', 'api', { targets: [up.target] });
  await setEntity(gw, 'route', 'api', { cluster: 'api', pathPrefix: '/api' });
  await setEntity(gw, 'route', 'ping', pingRoute('v1'));

  // Drafts never change live traffic: still the not-published 503.
  for (const p of ['/api/x', '/ping']) {
    const r = await request(`${gw.dataUrl}${p}`);
    assert.equal(r.status, 503, `${p} before the first publish: ${r.text}`);
    assert.equal(r.json?.code, 'Svc.Data.NotPublished');
  }
  assert.equal(up.requests.length, 0, 'nothing reached the upstream');

  // Dry-run, twice: the same answer, and nothing moves.
  const expectedPlan = ['cluster/api', 'route/api', 'route/ping'];
  for (let i = 0; i < 2; i++) {
    const d = await dryRun(gw);
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(d.json, { success: true, candidateGeneration: 1, issues: [], warnings: [], planned: expectedPlan });
  }
  assert.equal((await clusterStatus(gw)).generation, 0, 'dry-run published nothing');
  assert.equal((await history(gw)).items.length, 0, 'dry-run wrote no history');
  const e = await getEntity(gw, 'route', 'ping');
  assert.equal(e.state, 'draft');
  assert.equal(e.pending, 'set');
  assert.equal(e.published, null);
  assert.deepEqual(e.draft?.doc, pingRoute('v1'));
  assert.equal((await request(`${gw.dataUrl}/ping`)).status, 503, 'dry-run did not publish');

  // Publish: generation 1, every worker loads it, the routes serve.
  const p1 = await publish(gw);
  assert.deepEqual(p1, { ok: true, generation: 1, planned: expectedPlan, warnings: [] });
  const st = await clusterStatus(gw);
  assert.equal(st.generation, 1);
  for (const w of st.workers) assert.equal(w.generation, 1, `worker ${w.slot} acknowledged generation 1 before publish answered`);
  assert.equal(await text(gw, '/ping'), '200 v1');
  const proxied = await request(`${gw.dataUrl}/api/users?page=2`);
  assert.equal(proxied.status, 200, proxied.text);
  assert.equal(proxied.json.url, '/api/users?page=2');

  const after = await getEntity(gw, 'route', 'ping');
  assert.equal(after.state, 'published');
  assert.equal(after.pending, null);
  assert.equal(after.draft, null);
  assert.deepEqual(after.published, { doc: pingRoute('v1'), generation: 1 });

  // A changed draft: get shows both side by side; live traffic keeps the published one.
  await setEntity(gw, 'route', 'ping', pingRoute('v2'));
  const both = await getEntity(gw, 'route', 'ping');
  assert.equal(both.state, 'draft');
  assert.equal(both.pending, 'set');
  assert.deepEqual(both.draft?.doc, pingRoute('v2'));
  assert.ok(!Number.isNaN(Date.parse(both.draft!.updatedAt)), `updatedAt ${both.draft?.updatedAt}`);
  assert.deepEqual(both.published, { doc: pingRoute('v1'), generation: 1 });
  assert.equal(await text(gw, '/ping'), '200 v1', 'a draft over a published entity does not serve');

  const list = await listEntities(gw, 'route');
  assert.deepEqual(
    list.items.map((i) => [i.name, i.state, i.pending, i.publishedGeneration]),
    [
      ['api', 'published', null, 1],
      ['ping', 'draft', 'set', 1],
    ],
  );

  const d2 = await dryRun(gw);
  assert.equal(d2.status, 200, d2.text);
  assert.equal(d2.json.candidateGeneration, 2, 'candidateGeneration = current + 1');
  assert.deepEqual(d2.json.planned, ['route/ping'], 'only what changed is planned');
  assert.equal(await text(gw, '/ping'), '200 v1');

  const p2 = await publish(gw);
  assert.deepEqual(p2, { ok: true, generation: 2, planned: ['route/ping'], warnings: [] });
  assert.equal(await text(gw, '/ping'), '200 v2');
  assert.equal((await getEntity(gw, 'route', 'ping')).published?.generation, 2);
  assert.equal((await getEntity(gw, 'route', 'api')).published?.generation, 1, 'an unchanged entity keeps the generation it was published in');
});

test('nothing to publish: 200, planned [], generation unchanged (also when drafts equal the published documents)', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await setEntity(gw, 'route', 'ping', pingRoute('v1'));
  assert.equal((await publish(gw)).generation, 1);

  const empty = await publish(gw);
  assert.deepEqual(empty, { ok: true, generation: 1, planned: [], warnings: [] });
  const d = await dryRun(gw);
  assert.equal(d.status, 200, d.text);
  assert.deepEqual(d.json, { success: true, candidateGeneration: 2, issues: [], warnings: [], planned: [] });

  // A draft identical to the published document changes nothing.
  await setEntity(gw, 'route', 'ping', pingRoute('v1'));
  assert.deepEqual((await dryRun(gw)).json.planned, []);
  assert.deepEqual(await publish(gw), { ok: true, generation: 1, planned: [], warnings: [] });
  assert.equal((await clusterStatus(gw)).generation, 1);
  assert.equal((await history(gw)).items.length, 1, 'no history entry for an empty publish');
  assert.equal(await text(gw, '/ping'), '200 v1');
});

test('config delete stages a removal that only the next publish applies', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await setEntity(gw, 'route', 'ping', pingRoute('ping'));
  await setEntity(gw, 'route', 'all', { directResponse: { statusCode: 200, body: 'catch-all' } });
  assert.equal((await publish(gw)).generation, 1);
  assert.equal(await text(gw, '/ping'), '200 ping');

  const del = await deleteEntity(gw, 'route', 'ping');
  assert.equal(del.pending, 'delete');
  const staged = await getEntity(gw, 'route', 'ping');
  assert.equal(staged.state, 'draft');
  assert.equal(staged.pending, 'delete');
  assert.equal(staged.draft, null);
  assert.deepEqual(staged.published?.doc, pingRoute('ping'));
  assert.equal(await text(gw, '/ping'), '200 ping', 'a staged delete does not change live traffic');

  const d = await dryRun(gw);
  assert.deepEqual(d.json, { success: true, candidateGeneration: 2, issues: [], warnings: [], planned: ['route/ping'] });
  assert.deepEqual(await publish(gw), { ok: true, generation: 2, planned: ['route/ping'], warnings: [] });
  assert.equal(await text(gw, '/ping'), '200 catch-all', 'the deleted route no longer matches');
  const gone = await getEntityRaw(gw, 'route', 'ping');
  assert.equal(gone.status, 404, gone.text);
  assert.equal(gone.json?.code, 'Svc.Config.NotFound');
  assert.deepEqual((await listEntities(gw, 'route')).items.map((i) => i.name), ['all']);

  // Deleting a draft that was never published simply drops it.
  await setEntity(gw, 'route', 'never', pingRoute('never'));
  await deleteEntity(gw, 'route', 'never');
  assert.equal((await getEntityRaw(gw, 'route', 'never')).status, 404);
  assert.deepEqual((await dryRun(gw)).json.planned, []);
});

test('publish history lists each generation; rollback publishes a new generation serving the old content', BOUNDED, async (t) => {
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY] });
  await setEntity(gw, 'route', 'ping', pingRoute('one'));
  assert.equal((await publish(gw)).generation, 1);
  await setEntity(gw, 'route', 'ping', pingRoute('two'));
  await setEntity(gw, 'route', 'extra', { pathPrefix: '/extra', directResponse: { statusCode: 201, body: 'extra' } });
  assert.equal((await publish(gw)).generation, 2);
  assert.equal(await text(gw, '/ping'), '200 two');
  assert.equal(await text(gw, '/extra'), '201 extra');

  const h = await history(gw);
  assert.equal(h.current, 2);
  const byGen = new Map(h.items.map((i) => [i.generation, i]));
  assert.deepEqual([...byGen.keys()].sort(), [1, 2]);
  assert.equal(byGen.get(1)!.action, 'publish');
  assert.deepEqual(byGen.get(1)!.planned, ['route/ping']);
  assert.deepEqual(byGen.get(2)!.planned, ['route/extra', 'route/ping']);
  for (const i of h.items) {
    assert.equal(i.tenant, 'default');
    assert.ok(!Number.isNaN(Date.parse(i.createdAt)), `createdAt ${i.createdAt}`);
  }

  const rb = await rollback(gw, 1);
  assert.equal(rb.ok, true);
  assert.equal(rb.generation, 3, 'a rollback is a new generation');
  assert.deepEqual(rb.planned, ['route/extra', 'route/ping']);
  await waitForWorkersAt(gw, 3, 2_000);
  // Every worker serves generation 1's content: ask on enough new connections to reach both.
  for (let i = 0; i < 10; i++) {
    assert.equal(await text(gw, '/ping'), '200 one', `request ${i}`);
    assert.equal((await request(`${gw.dataUrl}/extra`)).status, 404, 'a route added after generation 1 is gone');
  }
  const h2 = await history(gw);
  assert.equal(h2.current, 3);
  const g3 = h2.items.find((i) => i.generation === 3);
  assert.equal(g3?.action, 'rollback');
  assert.deepEqual((await getEntity(gw, 'route', 'ping')).published, { doc: pingRoute('one'), generation: 3 });
  assert.equal((await getEntityRaw(gw, 'route', 'extra')).status, 404);

  // Regression: a rollback to the content already serving made a new, empty generation each time.
  for (const to of [1, 3]) {
    const same = await rollback(gw, to);
    assert.deepEqual(same, { ok: true, generation: 3, planned: [] }, `rollback to ${to}: nothing changes`);
  }
  assert.equal((await history(gw)).current, 3);

  const missing = await rollbackRaw(gw, 99);
  assert.equal(missing.status, 404, missing.text);
  assert.equal(missing.json?.code, 'Svc.Publish.NotFound');
  assert.equal((await clusterStatus(gw)).generation, 3);
});

test('a staged delete of something a rollback already removed stages nothing: get, list and delete agree', BOUNDED, async (t) => {
  // Regression: after `config delete route b` then a rollback to before b existed, b was
  // gone, yet `config get` answered 200 (pending delete, no draft, nothing published) and
  // `config list` listed it, while `config delete` answered 404.
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const fixed = (body: string) => ({ directResponse: { statusCode: 200, body }, pathPrefix: `/${body}` });
  await apply(gw, [['route', 'a', fixed('a')]]); // generation 1
  await apply(gw, [['route', 'b', fixed('b')]]); // generation 2
  await deleteEntity(gw, 'route', 'b');
  const rb = await rollback(gw, 1);
  assert.deepEqual(rb.planned, ['route/b']);
  assert.equal((await getEntityRaw(gw, 'route', 'b')).status, 404);
  assert.deepEqual((await listEntities(gw, 'route')).items.map((i) => i.name), ['a']);
  assert.equal((await deleteEntityRaw(gw, 'route', 'b')).status, 404);
});
