import { test } from 'node:test';
import assert from 'node:assert/strict';
import { privatePostgresSkip, startPrivatePostgres } from '../helpers/private-postgres.js';
import { openVolume } from '../../src/store/volume.js';
import { EntityRepo } from '../../src/store/entity-repo.js';

test('regression: a PostgreSQL stopped and started under a stream of transactions (a connection lost between statements no longer ends the process): every call settles within its bound, 503 while down, served again once back', { timeout: 60_000, skip: privatePostgresSkip() }, async (t) => {
  const pg = await startPrivatePostgres(t);
  const states: boolean[] = [];
  const v = await openVolume(pg.volumeUrl('restart'), '/', { warn: () => states.push(true), info: () => states.push(false) });
  t.after(() => v.close());
  const e = new EntityRepo(v.db);
  let running = true;
  const outcomes: string[] = [];
  let slowest = 0;
  // Four writers, each a transaction after another (reads and a write), as admin calls are.
  const writer = async (w: number) => {
    for (let i = 0; running; i++) {
      const t0 = performance.now();
      try {
        await v.db.transaction(async () => {
          await e.usage('acme', 'route', `w${w}-${i}`);
          await e.setDraft('acme', 'route', `w${w}-${i}`, { pathPrefix: `/${w}/${i}` });
        });
        outcomes.push('ok');
      } catch (err) {
        outcomes.push((err as { code?: string }).code ?? (err as Error).message);
        await new Promise((r) => setTimeout(r, 20));
      }
      slowest = Math.max(slowest, performance.now() - t0);
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  await new Promise((r) => setTimeout(r, 300));
  await pg.stop();
  await new Promise((r) => setTimeout(r, 1_000));
  const downFrom = outcomes.length;
  await pg.start();
  // Back within the re-check's half second, plus a connection.
  const t0 = performance.now();
  while (outcomes.at(-1) !== 'ok' && performance.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 20));
  const backMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 300));
  running = false;
  await Promise.all(writers);
  const kinds = new Set(outcomes);
  t.diagnostic(`${outcomes.length} transactions: ${JSON.stringify([...kinds])}; slowest ${slowest.toFixed(0)} ms; served again ${backMs.toFixed(0)} ms after the start`);
  assert.ok([...kinds].every((k) => k === 'ok' || k === 'Svc.Store.Unavailable'), `only served or 503: ${JSON.stringify([...kinds])}`);
  assert.ok(outcomes.slice(downFrom).includes('Svc.Store.Unavailable'), 'refused while down');
  assert.equal(outcomes.at(-1), 'ok', 'served again');
  assert.ok(slowest < 5_000, `no call waited past its bound (${slowest.toFixed(0)} ms)`);
  assert.ok(backMs < 3_000, `served again ${backMs.toFixed(0)} ms after the start`);
  assert.deepEqual(states.slice(0, 2), [true, false], 'down, then up, each told once');
});
