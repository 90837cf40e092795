import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { PgDb } from '../../src/store/pg/pg-db.js';

test('a PostgreSQL that accepts and never answers costs one call its timeout; later calls are refused at once, 503', async (t) => {
  const sockets = new Set<Socket>();
  const srv = createServer((s) => sockets.add(s)); // accepts, says nothing
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const s of sockets) s.destroy();
    srv.close();
  });
  const states: boolean[] = [];
  const pg = new PgDb(`postgres://postgres@127.0.0.1:${(srv.address() as { port: number }).port}/test`, 'x', 1_000, (down) => states.push(down));
  t.after(() => pg.close());
  const timed = async (): Promise<[number, unknown]> => {
    const t0 = performance.now();
    try {
      await pg.prepare('SELECT 1').get();
      return [performance.now() - t0, null];
    } catch (err) {
      return [performance.now() - t0, err];
    }
  };
  // The loop keeps ticking while the first call waits out its bound (a synchronous wait froze it).
  let last = performance.now();
  let gap = 0;
  const ticks = setInterval(() => {
    gap = Math.max(gap, performance.now() - last);
    last = performance.now();
  }, 10);
  const [first, err1] = await timed();
  clearInterval(ticks);
  assert.equal((err1 as { code?: string }).code, 'Svc.Store.Unavailable');
  assert.ok(first < 4_000, `the first call waited ${first} ms`);
  assert.ok(gap < 50, `the event loop kept ticking while it waited (longest gap ${gap.toFixed(1)} ms)`);
  const [second, err2] = await timed();
  assert.equal((err2 as { code?: string }).code, 'Svc.Store.Unavailable');
  assert.ok(second < 50, `later calls are refused at once (${second} ms)`);
  await assert.rejects(pg.transaction(async () => assert.fail('a transaction never starts while the store is down')), { code: 'Svc.Store.Unavailable' });
  assert.deepEqual(states, [true], 'the outage is told once');
});

test('regression: a server refusing a connection for too many (53300) is 503 Svc.Store.Unavailable, not a fault', async (t) => {
  const admin = new PgDb('postgres://postgres@127.0.0.1:5432/test', 'public');
  const role = `sy_limited_${process.pid}`;
  await admin.exec(`DROP ROLE IF EXISTS ${role}`);
  await admin.exec(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 0`);
  t.after(async () => {
    await admin.exec(`DROP ROLE IF EXISTS ${role}`);
    await admin.close();
  });
  const pg = new PgDb(`postgres://${role}@127.0.0.1:5432/test`, 'public');
  t.after(() => pg.close());
  await assert.rejects(pg.prepare('SELECT 1').get(), (err: { code?: string }) => err.code === 'Svc.Store.Unavailable');
});
