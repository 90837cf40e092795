import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { SyncPg } from '../../src/store/pg/sync-pg.js';

test('a PostgreSQL that accepts and never answers costs one call its timeout; later calls are refused at once, 503', async (t) => {
  const sockets = new Set<Socket>();
  const srv = createServer((s) => sockets.add(s)); // accepts, says nothing
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const s of sockets) s.destroy();
    srv.close();
  });
  const pg = new SyncPg(`postgres://postgres@127.0.0.1:${(srv.address() as { port: number }).port}/test`, 'x', 1_000);
  t.after(() => pg.close());
  const timed = (): [number, unknown] => {
    const t0 = performance.now();
    try {
      pg.query('SELECT 1', []);
      return [performance.now() - t0, null];
    } catch (err) {
      return [performance.now() - t0, err];
    }
  };
  const [first, err1] = timed();
  assert.equal((err1 as { code?: string }).code, 'Svc.Store.Unavailable');
  assert.ok(first < 4_000, `the first call waited ${first} ms`);
  await new Promise((r) => setTimeout(r, 100)); // the thread has marked the connection down
  const [second, err2] = timed();
  assert.equal((err2 as { code?: string }).code, 'Svc.Store.Unavailable');
  assert.ok(second < 50, `later calls are refused at once (${second} ms)`);
});
