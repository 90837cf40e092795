import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workersVerdict, type SlotView } from '../../src/supervisor/readiness.js';
import { StoreCheck } from '../../src/supervisor/store-check.js';
import { PgPing } from '../../src/store/pg/pg-ping.js';
import { shadowedReadyPath } from '../../src/supervisor/ready-path-shadow.js';
import { openVolume } from '../../src/store/volume.js';
import type { CompiledGeneration, CompiledRoute } from '../../src/contracts/generation.js';

const quiet = { warn: () => {}, info: () => {} };
const slot = (n: number, state: SlotView['state'], generation: number): SlotView => ({ slot: n, state, generation });

test('workers: ready only when every worker listens on the current generation; each other one is named with why', () => {
  assert.deepEqual(workersVerdict([slot(0, 'listening', 7), slot(1, 'listening', 7)], 7), { ok: true, ready: 2, total: 2, generation: 7 });
  assert.deepEqual(workersVerdict([slot(0, 'listening', 6), slot(1, 'starting', 7), slot(2, 'exited', 7), slot(3, 'draining', 7)], 7), {
    ok: false,
    ready: 0,
    total: 4,
    generation: 7,
    detail: 'worker 0 loading generation 7; worker 1 starting; worker 2 exited, respawning; worker 3 draining',
  });
  assert.deepEqual(workersVerdict([], 0), { ok: false, ready: 0, total: 0, generation: 0, detail: 'no worker started yet' });
});

/** A store whose pings the test counts and settles. */
function fakeStore() {
  const pending: { resolve: () => void; reject: (e: Error) => void }[] = [];
  return {
    pings: 0,
    pending,
    ping(): Promise<void> {
      this.pings++;
      return new Promise((resolve, reject) => pending.push({ resolve, reject }));
    },
    close() {},
  };
}

test('store: concurrent probes share one query, and its verdict stands for a while', async () => {
  const store = fakeStore();
  const check = new StoreCheck(store, 1_000, quiet, 200);
  const all = Array.from({ length: 50 }, () => check.check());
  assert.equal(store.pings, 1);
  store.pending[0]!.resolve();
  const verdicts = await Promise.all(all);
  assert.ok(verdicts.every((v) => v.ok && v === verdicts[0]));
  await check.check();
  assert.equal(store.pings, 1, 'a fresh verdict is reused');
  await new Promise((r) => setTimeout(r, 220));
  const next = check.check();
  assert.equal(store.pings, 2, 'a stale one is checked again');
  store.pending[1]!.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432'));
  assert.deepEqual(await next, { ok: false, ms: (await next).ms, detail: 'the query failed' }, 'the cause (a host) stays out of the verdict');
});

test('store: a query that never answers is not ready within the bound, and no second query joins it', async () => {
  const store = fakeStore();
  const check = new StoreCheck(store, 100, quiet, 0);
  const t0 = performance.now();
  const v = await check.check();
  const ms = performance.now() - t0;
  assert.equal(v.ok, false);
  assert.equal(v.detail, 'no answer within 100 ms');
  assert.ok(ms >= 95 && ms < 600, `answered after ${ms} ms`);
  const again = await check.check();
  assert.equal(again.ok, false);
  assert.equal(store.pings, 1, 'the query still out is waited on again, not doubled');
  // Its late answer does not count (it came past the bound); once it is in, the next check asks again.
  store.pending[0]!.resolve();
  await new Promise((r) => setImmediate(r));
  const fresh = check.check();
  assert.equal(store.pings, 2);
  store.pending[1]!.resolve();
  assert.equal((await fresh).ok, true);
});

test('PgPing: a PostgreSQL that accepts and never answers fails the ping within its bound', async (t) => {
  const sockets = new Set<Socket>();
  const srv = createServer((s) => sockets.add(s));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const s of sockets) s.destroy();
    srv.close();
  });
  const ping = new PgPing(`postgres://postgres@127.0.0.1:${(srv.address() as { port: number }).port}/test`, 'x', 300);
  t.after(() => ping.close());
  const t0 = performance.now();
  await assert.rejects(ping.ping());
  const ms = performance.now() - t0;
  assert.ok(ms < 1_500, `the ping failed after ${ms} ms`);
});

test('SQLite ping: it reads the volume file, so a file emptied underneath fails it although SQLite still holds the data in memory', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-ping-'));
  const volume = await openVolume('virtual://store.db', dir);
  t.after(async () => {
    await volume.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const ping = volume.pinger(1_000);
  return (async () => {
    await ping.ping();
    truncateSync(join(dir, 'store.db'), 0);
    truncateSync(join(dir, 'store.db-wal'), 0);
    // The cached pages still answer a query that needs none of the file's; the ping must not.
    assert.deepEqual(await volume.db.prepare('SELECT 1 AS one').get(), { one: 1 });
    await assert.rejects(ping.ping(), /disk I\/O error/);
  })();
});

test('the routes a data-port readiness path shadows: a covering prefix, with its case rule; never a catch-all', () => {
  const route = (name: string, pathPrefix: string, caseSensitive = true) => ({ tenant: 't', name, pathPrefix, caseSensitive }) as CompiledRoute;
  const gen = {
    tenants: { t: { routes: [route('all', ''), route('root', '/'), route('cover', '/rea'), route('exact', '/readyz'), route('folded', '/READY', false), route('cased', '/READY'), route('beside', '/readyz/x')] } },
  } as unknown as CompiledGeneration;
  assert.deepEqual(shadowedReadyPath(gen, '/readyz'), ['t/cover', 't/exact', 't/folded']);
});
