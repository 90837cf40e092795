import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, clusterStatus, deleteEntity, dryRun, publish, publishRaw, rollbackRaw, setEntity, setEntityRaw } from './helpers/admin.js';
import { request } from './helpers/http.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/** A route whose document is about `bytes` long (a direct response carrying a body). */
const bigRoute = (host: string, bytes: number) => ({ hosts: [host], directResponse: { statusCode: 200, body: 'x'.repeat(bytes) } });

test('with the default quotas, 150 drafts of 1 MB are all refused (413 Svc.Quota.DocumentTooLarge) and 200 KB ones stop at 16 MiB (413 Svc.Quota.Bytes)', async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const started = Date.now();
  const codes = new Map<string, number>();
  for (let i = 0; i < 150 && Date.now() - started < 60_000; i++) {
    const r = await setEntityRaw(gw, 'route', `big-${i}`, bigRoute('flood.example', 1_000_000), 'flood');
    codes.set(`${r.status} ${r.json?.code}`, (codes.get(`${r.status} ${r.json?.code}`) ?? 0) + 1);
    if (i === 0) assert.equal(r.json.limit, 256 * KiB);
  }
  assert.deepEqual([...codes], [['413 Svc.Quota.DocumentTooLarge', 150]]);

  const each = 200 * 1000;
  const docBytes = Buffer.byteLength(JSON.stringify(bigRoute('flood.example', each)));
  let accepted = 0;
  let refused = 0;
  for (let i = 0; i < 150 && Date.now() - started < 120_000; i++) {
    const r = await setEntityRaw(gw, 'route', `big-${i}`, bigRoute('flood.example', each), 'flood');
    if (r.status === 200) {
      assert.equal(refused, 0, 'nothing is accepted after the first refusal');
      accepted++;
    } else {
      assert.equal(r.status, 413, r.text);
      assert.equal(r.json.code, 'Svc.Quota.Bytes');
      refused++;
    }
  }
  assert.equal(accepted, Math.floor((16 * MiB) / docBytes));
  assert.equal(refused, 150 - accepted);
  // Replacing a stored document with one no larger still passes at the limit.
  assert.equal((await setEntityRaw(gw, 'route', 'big-0', bigRoute('flood.example', 10), 'flood')).status, 200);
  // Another tenant is not affected.
  assert.equal((await setEntityRaw(gw, 'route', 'tiny', bigRoute('other.example', 10), 'other')).status, 200);
});

test('per-tenant overrides: the entity count counts drafts and published entities; publishes past the rate answer 429 with Retry-After', async (t) => {
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    edit: (c) => (c.quotas = { tenants: { small: { entities: 3, publishesPerMinute: 2 } } }),
  });
  for (const n of ['a', 'b']) await setEntity(gw, 'route', n, bigRoute('small.example', 1), 'small');
  await publish(gw, 'small');
  await setEntity(gw, 'route', 'c', bigRoute('small.example', 1), 'small'); // 2 published + 1 draft
  const over = await setEntityRaw(gw, 'route', 'd', bigRoute('small.example', 1), 'small');
  assert.equal(over.status, 413, over.text);
  assert.equal(over.json.code, 'Svc.Quota.Entities');
  assert.equal(over.json.limit, 3);
  assert.ok(over.json.traceId);
  // An update of an entity already counted passes.
  assert.equal((await setEntityRaw(gw, 'route', 'a', bigRoute('small.example', 2), 'small')).status, 200);
  // The default tenant has the instance-wide quota.
  for (const n of ['a', 'b', 'c', 'd']) await setEntity(gw, 'route', n, bigRoute('d.example', 1), 'default');

  const second = await publishRaw(gw, 'small');
  assert.equal(second.status, 200, second.text);
  const third = await publishRaw(gw, 'small');
  assert.equal(third.status, 429, third.text);
  assert.equal(third.json.code, 'Svc.Quota.Publishes');
  assert.ok(Number(third.headers['retry-after']) >= 1, `retry-after ${third.headers['retry-after']}`);
  const rb = await rollbackRaw(gw, 1, 'small');
  assert.equal(rb.status, 429, 'a rollback takes from the same budget');
  assert.equal((await publishRaw(gw, 'default')).status, 200, "another tenant's publishes are not limited by small's");
});

test('dry-runs, explains against the drafts and sync dry-runs with publish share a dryRunsPerMinute budget per tenant (429 Svc.Quota.DryRuns with Retry-After); publishes and other tenants are not charged', async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: (c) => (c.quotas = { tenants: { small: { dryRunsPerMinute: 3 } } }) });
  const token = gw.tokens.root!;
  const post = (tenant: string, path: string, body?: unknown) => request(`${gw.adminUrl}/api/v1/${tenant}/${path}`, { method: 'POST', token, body });
  await setEntity(gw, 'route', 'r', bigRoute('small.example', 1), 'small');
  assert.equal((await dryRun(gw, 'small')).status, 200);
  const explained = await post('small', 'explain', { method: 'GET', url: 'http://small.example/', draft: true });
  assert.equal(explained.status, 200, explained.text);
  const state = await request(`${gw.adminUrl}/api/v1/small/export?state=drafts`, { token });
  assert.equal(state.status, 200, state.text);
  const synced = await post('small', 'sync', { state: state.json, publish: true, dryRun: true });
  assert.equal(synced.status, 200, synced.text);
  // The budget of 3 is spent: each of the three ways answers 429.
  for (const [what, r] of [
    ['dry-run', await dryRun(gw, 'small')],
    ['explain --draft', await post('small', 'explain', { method: 'GET', url: 'http://small.example/', draft: true })],
    ['sync --dry-run --publish', await post('small', 'sync', { state: state.json, publish: true, dryRun: true })],
  ] as const) {
    assert.equal(r.status, 429, `${what}: ${r.text}`);
    assert.equal(r.json.code, 'Svc.Quota.DryRuns', what);
    assert.equal(r.json.limit, 3, what);
    assert.ok(Number(r.headers['retry-after']) >= 1, `${what}: retry-after ${r.headers['retry-after']}`);
  }
  // Reads that compile nothing, a publish, and another tenant's dry-runs still go through.
  assert.equal((await post('small', 'explain', { method: 'GET', url: 'http://small.example/' })).status, 200);
  assert.equal((await post('small', 'sync', { state: state.json, dryRun: true })).status, 200);
  assert.equal((await publishRaw(gw, 'small')).status, 200);
  await setEntity(gw, 'route', 'r', bigRoute('d.example', 1));
  for (let i = 0; i < 5; i++) assert.equal((await dryRun(gw)).status, 200, 'the default tenant has the instance-wide budget of 60');
});

test('regression: a rollback that would take the tenant past its entity quota (with its drafts over it) is refused 413, and changes nothing', async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: (c) => void (c.quotas = { ...c.quotas, tenants: { q: { entities: 3 } } }) });
  const r = (n: string) => ({ hosts: ['q.example'], pathPrefix: `/${n}`, directResponse: { statusCode: 200, body: n } });
  for (const n of ['a', 'b', 'c']) await setEntity(gw, 'route', n, r(n), 'q');
  const g1 = (await publish(gw, 'q')).generation;
  for (const n of ['a', 'b', 'c']) await deleteEntity(gw, 'route', n, 'q');
  const g2 = (await publish(gw, 'q')).generation;
  for (const n of ['d', 'e', 'f']) await setEntity(gw, 'route', n, r(n), 'q');
  assert.equal((await setEntityRaw(gw, 'route', 'g', r('g'), 'q')).status, 413, 'at the quota');
  const rb = await rollbackRaw(gw, g1, 'q');
  assert.equal(rb.status, 413, rb.text);
  assert.equal((rb.json as { code: string }).code, 'Svc.Quota.Entities');
  const status = await clusterStatus(gw);
  assert.equal(status.generation, g2, 'no generation was made');
  // Without the drafts, the same rollback fits.
  for (const n of ['d', 'e', 'f']) await deleteEntity(gw, 'route', n, 'q');
  assert.equal((await rollbackRaw(gw, g1, 'q')).status, 200);
});
