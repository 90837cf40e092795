import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshVolume } from '../helpers/volumes.js';
import { EntityRepo } from '../../src/store/entity-repo.js';

/** The longest gap between the ticks of a 10 ms interval while `fn` runs. */
async function maxTickGap(fn: () => Promise<void>): Promise<number> {
  let last = performance.now();
  let max = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
  }, 10);
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  return Math.max(max, performance.now() - last);
}

test('regression: a slow PostgreSQL statement does not stall the event loop, in or out of a transaction', async (t) => {
  const v = await freshVolume(t, 'postgres');
  const e = new EntityRepo(v.db);
  const sleep = v.db.prepare('SELECT pg_sleep(0.4) AS slept');
  const t0 = performance.now();
  const gap = await maxTickGap(async () => {
    await sleep.get();
    await v.db.transaction(async () => {
      await sleep.get();
      await e.setDraft('acme', 'route', 'a', { pathPrefix: '/a' });
    });
  });
  assert.ok(performance.now() - t0 >= 800, 'both sleeps ran');
  assert.ok(gap < 50, `the loop kept ticking: longest gap ${gap.toFixed(1)} ms`);
  assert.equal((await e.drafts('acme')).length, 1, 'the transaction committed');
});

test('statements from outside a running transaction do not land in it; the transaction sees its own writes', async (t) => {
  for (const kind of ['memory', 'postgres'] as const) {
    const v = await freshVolume(t, kind);
    const e = new EntityRepo(v.db);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const tx = v.db
      .transaction(async () => {
        await e.setDraft('acme', 'route', 'inside', {});
        assert.equal((await e.drafts('acme')).length, 1, `${kind}: its own write is visible inside`);
        await held;
        throw new Error('undo');
      })
      .catch((err: Error) => err.message);
    // Outside the transaction's context: on SQLite it waits for the transaction to end, on PostgreSQL it reads committed rows.
    const outside = e.drafts('acme');
    await new Promise((r) => setTimeout(r, 50));
    release();
    assert.equal(await tx, 'undo');
    assert.deepEqual(await outside, [], `${kind}: the outside read never saw the uncommitted (then rolled back) draft`);
    assert.deepEqual(await e.drafts('acme'), []);
  }
});
