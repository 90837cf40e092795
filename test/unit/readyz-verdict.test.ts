import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readiness, type SlotView } from '../../src/supervisor/readiness.js';
import { StoreCheck } from '../../src/supervisor/store-check.js';
import { ready } from '../../src/admin/handlers/sys.js';
import type { Reply } from '../../src/admin/op-context.js';
import type { OpContext } from '../../src/admin/op-context.js';
import type { Services } from '../../src/admin/services.js';

const quiet = { warn: () => {}, info: () => {} };
const listening: SlotView[] = [{ slot: 0, state: 'listening', generation: 3 }];
const tick = () => new Promise((r) => setImmediate(r));

/** A store whose pings stay out until the test settles them. */
function stalledStore() {
  const pending: { resolve: () => void; reject: (e: Error) => void }[] = [];
  return { pending, ping: () => new Promise<void>((resolve, reject) => pending.push({ resolve, reject })), close() {} };
}

/** /readyz's handler over `readiness`, as the admin port calls it. */
function probe(readiness: Readiness): Reply {
  const out = ready({ services: { readiness } as unknown as Services } as OpContext<Services>);
  assert.ok(!(out instanceof Promise), '/readyz answers without waiting');
  return out as Reply;
}

test('/readyz answers at once from the latest store verdict: not checked yet, then each verdict once in, the previous one while a check is out within its bound', async () => {
  const store = stalledStore();
  const readiness = new Readiness(() => listening, () => 3, new StoreCheck(store, 200, quiet, 0));

  const first = probe(readiness);
  assert.equal(first.status, 503);
  assert.deepEqual(first.body, {
    ready: false,
    checks: { workers: { ok: true, ready: 1, total: 1, generation: 3 }, store: { ok: false, ms: 0, detail: 'store not checked yet' } },
  });
  assert.equal(store.pending.length, 1, 'the probe started a check');
  assert.equal(probe(readiness).status, 503);
  assert.equal(store.pending.length, 1, 'probes join the check under way');

  store.pending[0]!.resolve();
  await tick();
  const up = probe(readiness);
  assert.equal(up.status, 200);
  assert.equal((up.body as { checks: { store: { ok: boolean } } }).checks.store.ok, true);

  // The store stalls: the next check is out, and until its bound passes the last verdict stands.
  assert.equal(store.pending.length, 2, 'that probe started the next check');
  const t0 = performance.now();
  for (let i = 0; i < 20; i++) assert.equal(probe(readiness).status, 200);
  assert.ok(performance.now() - t0 < 50, 'twenty probes against a stalled store took no time');
  assert.equal(store.pending.length, 2, 'one query at a time');

  await new Promise((r) => setTimeout(r, 250));
  const down = probe(readiness);
  assert.equal(down.status, 503);
  assert.deepEqual((down.body as { checks: { store: unknown } }).checks.store, { ok: false, ms: (down.body as { checks: { store: { ms: number } } }).checks.store.ms, detail: 'no answer within 200 ms' });
});

test('/readyz: workers not on the current generation are not ready, whatever the store says', async () => {
  const store = stalledStore();
  const readiness = new Readiness(() => [{ slot: 0, state: 'listening', generation: 2 }], () => 3, new StoreCheck(store, 200, quiet, 0));
  probe(readiness);
  store.pending[0]!.resolve();
  await tick();
  const r = probe(readiness);
  assert.equal(r.status, 503);
  assert.deepEqual((r.body as { checks: { workers: unknown } }).checks.workers, { ok: false, ready: 0, total: 1, generation: 3, detail: 'worker 0 loading generation 3' });
});
