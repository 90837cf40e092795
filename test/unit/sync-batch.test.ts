import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VOLUME_KINDS, freshVolume } from '../helpers/volumes.js';
import { EntityRepo } from '../../src/store/entity-repo.js';
import { TenantQuotas } from '../../src/admin/tenant-quotas.js';
import { SvcError } from '../../src/shared/errors.js';
import type { Kind } from '../../src/contracts/entities.js';
import type { StoreDb } from '../../src/contracts/store-db.js';

const LIMITS = { entities: 6, documentBytes: 200, totalBytes: 400, publishesPerMinute: 10, dryRunsPerMinute: 10 };
const quotasOn = (db: StoreDb, tenants: Record<string, Partial<typeof LIMITS>> = {}) => {
  const entities = new EntityRepo(db);
  return { entities, quotas: new TenantQuotas({ ...LIMITS, tenants } as never, entities, db) };
};
type Draft = { kind: Kind; name: string; doc: unknown };
const route = (name: string, pad = 0): Draft => ({ kind: 'route', name, doc: { pathPrefix: `/${name}`, note: 'x'.repeat(pad) } });

/** What a sync's writes did before batching: setDraft one after another in one transaction, refused whole. */
async function oneByOne(db: StoreDb, quotas: TenantQuotas, tenant: string, drafts: readonly Draft[]): Promise<unknown> {
  return db
    .transaction(async () => {
      await quotas.lock(tenant);
      for (const d of drafts) await quotas.setDraft(tenant, d.kind, d.name, d.doc);
    })
    .then(
      () => null,
      (e: SvcError) => ({ code: e.code, message: e.message.replace(tenant, 'T'), extra: e.extra }),
    );
}

async function batched(quotas: TenantQuotas, tenant: string, drafts: readonly Draft[]): Promise<unknown> {
  return quotas.setDrafts(tenant, drafts).then(
    () => null,
    (e: SvcError) => ({ code: e.code, message: e.message.replace(tenant, 'T'), extra: e.extra }),
  );
}

for (const kind of VOLUME_KINDS) {
  test(`a batch of drafts passes or fails the quotas as the same drafts written one by one: same code and numbers, refused whole [${kind}]`, async (t) => {
    const v = await freshVolume(t, kind);
    const { entities, quotas } = quotasOn(v.db);
    // Each case runs on two tenants holding the same state: one written one by one, one batched.
    const cases: { what: string; before: Draft[]; batch: Draft[]; code: string | null }[] = [
      { what: 'within every limit', before: [route('a')], batch: [route('b'), route('c'), route('a', 10)], code: null },
      { what: 'the entity count crossed by the 5th new draft', before: [route('a'), route('b')], batch: [route('c'), route('a', 5), route('d'), route('e'), route('f'), route('g')], code: 'Svc.Quota.Entities' },
      { what: 'the total bytes crossed mid-batch', before: [route('a', 100)], batch: [route('b', 100), route('c', 100), route('d', 100)], code: 'Svc.Quota.Bytes' },
      { what: 'a document too large after ones that fit', before: [], batch: [route('b'), route('c', 300)], code: 'Svc.Quota.DocumentTooLarge' },
      { what: 'an entity replaced by a smaller one passes at the limit', before: [route('a', 150), route('b', 150)], batch: [route('a', 10), route('c', 120)], code: null },
    ];
    let n = 0;
    for (const c of cases) {
      const [one, all] = [`one${++n}`, `all${n}`];
      for (const tenant of [one, all]) for (const d of c.before) await entities.setDraft(tenant, d.kind, d.name, d.doc, 1);
      const expected = await oneByOne(v.db, quotas, one, c.batch);
      const got = await batched(quotas, all, c.batch);
      assert.equal((expected as { code?: string } | null)?.code ?? null, c.code, `${c.what}: one by one`);
      assert.deepEqual(got, expected, `${c.what}: the batch answers as one by one`);
      const names = async (tenant: string) => (await entities.drafts(tenant)).map((d) => [d.name, JSON.stringify(d.doc)]).sort();
      assert.deepEqual(await names(all), await names(one), `${c.what}: the same drafts stored`);
      if (c.code) assert.deepEqual((await names(all)).map(([name]) => name), c.before.map((d) => d.name).sort(), `${c.what}: nothing of a refused batch stored`);
    }
  });

  test(`a 500-entity batch is a few statements, not one per entity [${kind}]`, async (t) => {
    const v = await freshVolume(t, kind);
    const counted = countingDb(v.db);
    const { entities, quotas } = quotasOn(counted.db, { big: { entities: 1000, totalBytes: 1_000_000 } });
    const drafts = Array.from({ length: 500 }, (_, i) => route(`r${i}`));
    await quotas.setDrafts('big', drafts);
    const writes = counted.reset();
    const read = await entities.drafts('big');
    counted.reset();
    const rows = read.map((d) => ({ tenant: 'big', kind: d.kind, name: d.name, doc: d.doc }));
    await v.db.transaction(() => entities.replacePublished('big', rows, new Set(rows.map((r) => `${r.kind}/${r.name}`)), 1, read));
    const publish = counted.reset();
    assert.equal((await entities.published('big')).length, 500);
    assert.equal((await entities.drafts('big')).length, 0, 'the drafts read are cleared');
    counted.reset();
    await entities.stageDeletes('big', drafts.map((d) => ({ kind: d.kind, name: d.name })));
    const deletes = counted.reset();
    assert.equal((await entities.drafts('big')).filter((d) => d.doc === null).length, 500, 'every removal staged');
    t.diagnostic(`statements for 500 entities: drafts ${writes}, publish record ${publish}, staged deletes ${deletes}`);
    // 500 rows at 100 a statement: 5 writes, plus the lock, the usage read and the transaction's own.
    assert.ok(writes <= 10, `the batch of drafts took ${writes} statements`);
    assert.ok(publish <= 14, `the publish's record took ${publish} statements`);
    assert.ok(deletes <= 8, `the staged deletes took ${deletes} statements`);
  });
}

/** The volume's db, counting the statements it issues (lock, transaction and savepoint statements included). */
function countingDb(db: StoreDb): { db: StoreDb; reset(): number } {
  let n = 0;
  const wrapped: StoreDb = {
    prepare(sql) {
      const st = db.prepare(sql);
      return {
        run: (...p) => (n++, st.run(...p)),
        get: (...p) => (n++, st.get(...p)),
        all: (...p) => (n++, st.all(...p)),
      };
    },
    exec: (sql) => (n++, db.exec(sql)),
    transaction: (fn) => (n += 2, db.transaction(fn)),
    lockTenant: (tenant) => (n++, db.lockTenant(tenant)),
    close: () => db.close(),
  };
  return {
    db: wrapped,
    reset() {
      const r = n;
      n = 0;
      return r;
    },
  };
}
