import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TenantQueue } from '../../src/store/tenant-queue.js';

const late = () => Object.assign(new Error('late'), { code: 'late' });

test('a tenant queue: one turn at a time in arrival order, tenants apart, emptied when idle', async () => {
  const q = new TenantQueue();
  const order: string[] = [];
  const a1 = await q.enter('A', 1_000, late);
  const b1 = await q.enter('B', 1_000, late); // another tenant does not wait for A
  const a2 = q.enter('A', 1_000, late).then((r) => (order.push('a2'), r));
  const a3 = q.enter('A', 1_000, late).then((r) => (order.push('a3'), r));
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(order, []);
  a1();
  a1(); // a second release hands on nothing
  (await a2)();
  (await a3)();
  assert.deepEqual(order, ['a2', 'a3']);
  assert.equal(q.size, 1);
  b1();
  assert.equal(q.size, 0);
});

test('a tenant queue: a waiter past its bound leaves with the error; the ones behind it still get their turn', async () => {
  const q = new TenantQueue();
  const a1 = await q.enter('A', 1_000, late);
  const t0 = performance.now();
  const short = q.enter('A', 50, late).then(() => 'turn', (e: { code: string }) => e.code);
  const behind = q.enter('A', 1_000, late);
  assert.equal(await short, 'late');
  assert.ok(performance.now() - t0 < 500);
  a1();
  (await behind)();
  assert.equal(q.size, 0);
});
