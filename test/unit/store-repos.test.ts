import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VOLUME_KINDS, freshVolume } from '../helpers/volumes.js';
import { EntityRepo } from '../../src/store/entity-repo.js';
import { AuditRepo } from '../../src/store/audit-repo.js';
import { PluginRepo } from '../../src/store/plugin-repo.js';
import Database from 'better-sqlite3';
import { SqliteDb } from '../../src/store/sqlite-db.js';
import type { EntityRow } from '../../src/contracts/entities.js';

for (const kind of VOLUME_KINDS) {
  test(`drafts, staged removals, usage and publishing read the same on every volume [${kind}]`, async (t) => {
    const e = new EntityRepo((await freshVolume(t, kind)).db);
    await e.setDraft('acme', 'route', 'a', { pathPrefix: '/a' }, 1000);
    await e.setDraft('acme', 'cluster', 'c', { targets: ['127.0.0.1:1'] }, 1000);
    await e.setDraft('other', 'route', 'x', { pathPrefix: '/x' }, 1000);
    assert.deepEqual(await e.usage('acme', 'route', 'a'), { others: { entities: 1, bytes: 27 }, self: 19 });
    const read = await e.drafts('acme');
    const rows: EntityRow[] = read.map((d) => ({ tenant: 'acme', kind: d.kind, name: d.name, doc: d.doc }));
    // Written after the publish read the drafts (another node, on a shared store): it stays a draft.
    await e.setDraft('acme', 'route', 'late', { pathPrefix: '/late' }, 1500);
    await e.replacePublished('acme', rows, new Set(['route/a', 'cluster/c']), 7, read);
    assert.deepEqual((await e.drafts('acme')).map((d) => [d.name, d.doc]), [['late', { pathPrefix: '/late' }]]);
    assert.ok(await e.stageDelete('acme', 'route', 'late', 1600), 'dropped again, never published');
    assert.deepEqual(await e.get('acme', 'route', 'a'), { tenant: 'acme', kind: 'route', name: 'a', state: 'published', pending: null, draft: null, published: { doc: { pathPrefix: '/a' }, generation: 7 } });
    assert.equal((await e.published('acme')).length, 2);
    assert.equal((await e.published()).length, 2, "the other tenant's draft is not published");
    assert.ok(await e.stageDelete('acme', 'route', 'a', 2000));
    assert.equal((await e.get('acme', 'route', 'a'))?.pending, 'delete');
    await e.setDraft('acme', 'route', 'new', { pathPrefix: '/n' }, 3000);
    assert.ok(await e.stageDelete('acme', 'route', 'new', 3000), 'a draft never published is dropped');
    assert.equal(await e.get('acme', 'route', 'new'), null);
    assert.deepEqual((await e.list('acme', 'route')).map((v) => [v.name, v.state, v.pending]), [['a', 'draft', 'delete']]);
  });

  test(`a transaction that throws leaves nothing, nested ones roll back to their savepoint [${kind}]`, async (t) => {
    const v = await freshVolume(t, kind);
    const e = new EntityRepo(v.db);
    await assert.rejects(v.db.transaction(async () => {
      await e.setDraft('acme', 'route', 'gone', {});
      throw new Error('undo');
    }), /undo/);
    await v.db.transaction(async () => {
      await e.setDraft('acme', 'route', 'kept', {});
      await assert.rejects(v.db.transaction(async () => {
        await e.setDraft('acme', 'route', 'inner', {});
        throw new Error('inner');
      }), /inner/);
    });
    assert.deepEqual((await e.drafts('acme')).map((d) => d.name), ['kept']);
  });

  test(`transactions nested side by side run one after another: one rolled back to its savepoint takes nothing of the other's [${kind}]`, async (t) => {
    const v = await freshVolume(t, kind);
    const e = new EntityRepo(v.db);
    await v.db.transaction(async () => {
      const [first, second] = await Promise.allSettled([
        v.db.transaction(async () => {
          await e.setDraft('acme', 'route', 'undone', {});
          await new Promise((r) => setTimeout(r, 30)); // the other one would run here if they interleaved
          throw new Error('undo');
        }),
        v.db.transaction(async () => e.setDraft('acme', 'route', 'kept', {})),
      ]);
      assert.equal(first.status, 'rejected');
      assert.equal(second.status, 'fulfilled');
    });
    assert.deepEqual((await e.drafts('acme')).map((d) => d.name), ['kept']);
  });

  test(`the audit trail appends with increasing ids, pages newest first, and records a changed status [${kind}]`, async (t) => {
    const a = new AuditRepo((await freshVolume(t, kind)).db);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await a.append({ at: 1_700_000_000_000 + i, identityId: 'root', identityKind: 'system', tenant: 'acme', operation: 'config.set', target: `route/r${i}`, status: 200, traceId: `t${i}`, generation: null }));
    }
    assert.deepEqual([...ids].sort((x, y) => x - y), ids, 'ids increase');
    await a.setStatus(ids[4]!, 503);
    const page = await a.list('acme', 2, null);
    assert.deepEqual(page.map((r) => [r.target, r.status, r.at]), [['route/r4', 503, 1_700_000_000_004], ['route/r3', 200, 1_700_000_000_003]]);
    assert.deepEqual((await a.list('acme', 10, page[1]!.id)).map((r) => r.target), ['route/r2', 'route/r1', 'route/r0']);
  });

  test(`plugins are enabled until disabled, per tenant [${kind}]`, async (t) => {
    const p = new PluginRepo((await freshVolume(t, kind)).db);
    await p.setEnabled('acme', 'cache', false);
    await p.setEnabled('acme', 'echo', false);
    await p.setEnabled('acme', 'echo', true);
    await p.setEnabled('beta', 'mirror', false);
    assert.deepEqual([...(await p.disabled('acme'))], ['cache']);
    assert.deepEqual(await p.allDisabled(), { acme: ['cache'], beta: ['mirror'] });
  });
}

test('regression: a SQLite COMMIT that fails rolls the transaction back, and the next one runs', async () => {
  const raw = new Database(':memory:');
  raw.pragma('foreign_keys = ON');
  // A deferred constraint fails at COMMIT, as a full disk or an I/O error writing the WAL would.
  raw.exec('CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (pid INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)');
  const db = new SqliteDb(raw);
  await assert.rejects(db.transaction(async () => void (await db.prepare('INSERT INTO c (pid) VALUES (42)').run())));
  assert.equal(raw.inTransaction, false, 'the connection left the failed transaction');
  await db.transaction(async () => void (await db.prepare('INSERT INTO p (id) VALUES (1)').run()));
  assert.deepEqual(await db.prepare('SELECT id FROM p').all(), [{ id: 1 }]);
  assert.deepEqual(await db.prepare('SELECT pid FROM c').all(), [], 'nothing of the failed transaction stayed');
});
