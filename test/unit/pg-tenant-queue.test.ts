import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshVolume, pgVolumeUrl } from '../helpers/volumes.js';
import { openVolume } from '../../src/store/volume.js';
import { EntityRepo } from '../../src/store/entity-repo.js';
import type { PgDb } from '../../src/store/pg/pg-db.js';

/**
 * Another node (a second volume on the same schema) holds tenant A's lock for `holdMs` while 12
 * writers of A start on this node; then this node reads tenant B. Writers wait in A's queue, not
 * on pooled connections, so B finds a connection at once.
 */
async function contend(t: { after(fn: () => void | Promise<void>): void }, holdMs: number) {
  const v = await freshVolume(t, 'postgres');
  const db = v.db as PgDb;
  const other = await openVolume(pgVolumeUrl(db.schema), '/');
  t.after(() => other.close());
  const e = new EntityRepo(db);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const holder = other.db.transaction(async () => {
    await other.db.lockTenant('A');
    locked();
    await held;
  });
  await isLocked;
  const t0 = performance.now();
  const writers = Array.from({ length: 12 }, (_, i) =>
    db
      .transaction(async () => {
        await db.lockTenant('A');
        await e.setDraft('A', 'route', `r${i}`, {});
      }, { tenant: 'A' })
      .then(
        () => ({ outcome: 'ok', ms: performance.now() - t0 }),
        (err: { code?: string; message: string }) => ({ outcome: err.code ?? err.message, ms: performance.now() - t0 }),
      ),
  );
  await new Promise((r) => setTimeout(r, 100));
  const b0 = performance.now();
  const b = await e.drafts('B').then(() => 'ok', (err: { code?: string; message: string }) => err.code ?? err.message);
  const bMs = performance.now() - b0;
  const timer = setTimeout(release, Math.max(0, holdMs - 100));
  const outcomes = await Promise.all(writers);
  clearTimeout(timer);
  release();
  await holder;
  return { db, e, b, bMs, outcomes };
}

test('12 writers of one tenant waiting on its lock leave the pool to other tenants; all succeed once the holder is quick', async (t) => {
  const { db, e, b, bMs, outcomes } = await contend(t, 500);
  assert.equal(b, 'ok');
  assert.ok(bMs < 200, `tenant B's read waited ${bMs.toFixed(0)} ms`);
  assert.deepEqual(outcomes.map((o) => o.outcome), Array(12).fill('ok'));
  assert.equal((await e.drafts('A')).length, 12);
  assert.equal(db.tenants.size, 0, 'the queue keeps no idle tenant');
});

test('a tenant whose lock is held too long: its queued writers answer 503 within the connection bound, other tenants go on', async (t) => {
  const { db, b, bMs, outcomes } = await contend(t, 3_500);
  assert.equal(b, 'ok');
  assert.ok(bMs < 200, `tenant B's read waited ${bMs.toFixed(0)} ms`);
  for (const o of outcomes) {
    assert.equal(o.outcome, 'Svc.Store.Unavailable');
    assert.ok(o.ms < 3_000, `a writer answered after ${o.ms.toFixed(0)} ms`);
  }
  assert.equal(db.tenants.size, 0);
});

test('a transaction of a tenant nested in one of the same tenant is a savepoint and does not queue again', async (t) => {
  const v = await freshVolume(t, 'postgres');
  const e = new EntityRepo(v.db);
  const t0 = performance.now();
  await v.db.transaction(async () => {
    await v.db.lockTenant('A');
    await v.db.transaction(() => e.setDraft('A', 'route', 'inner', {}), { tenant: 'A' });
  }, { tenant: 'A' });
  assert.ok(performance.now() - t0 < 1_000);
  assert.equal((await e.drafts('A')).length, 1);
});
