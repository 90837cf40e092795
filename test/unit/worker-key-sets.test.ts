import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPair, exportJWK } from 'jose';
import { WorkerKeySets } from '../../src/worker/worker-key-sets.js';
import type { Worker } from 'node:cluster';
import { KeySets } from '../../src/supervisor/key-sets/key-sets.js';
import type { FetchedKeySet } from '../../src/supervisor/key-sets/key-set-fetch.js';
import type { FromWorker, ToWorker } from '../../src/contracts/ipc.js';
import { waitFor } from '../helpers/wait.js';

test('worker key sets: newest version kept, one ask per source at a time, answered by the next set, then the node\'s cooldown', async () => {
  const sent: FromWorker[] = [];
  let now = 0;
  const sets = new WorkerKeySets((m) => sent.push(m), () => now);
  const jwk = { ...(await exportJWK((await generateKeyPair('ES256')).publicKey)), kid: 'k1', alg: 'ES256' };
  sets.update([{ id: 's', version: 2, state: 'fresh', keys: [jwk], nextFetchAt: 0 }]);
  sets.update([{ id: 's', version: 1, state: 'expired', keys: [], nextFetchAt: 0 }]);
  assert.equal(sets.get('s')!.version, 2, 'an older set does not replace a newer one');
  assert.ok(sets.get('s')!.keys);
  const a = sets.refresh('s');
  const b = sets.refresh('s');
  assert.equal(a, b, 'one ask at a time');
  assert.deepEqual(sent, [{ type: 'key-refresh', source: 's' }]);
  sets.update([{ id: 's', version: 3, state: 'stale', keys: [jwk], nextFetchAt: 60_000 }]);
  assert.equal((await a)!.version, 3);
  // The node's cooldown ends later than a request's wait: no ask, the set held at once.
  const quiet = sets.refresh('s');
  assert.equal(await settledAtOnce(quiet), true, 'answered without a wait');
  assert.equal((await quiet)!.version, 3);
  assert.equal(sent.length, 1, 'no ask');
  // An answer without a change (same version) still tells of the node's later cooldown.
  sets.update([{ id: 's', version: 3, state: 'stale', keys: [jwk], nextFetchAt: 90_000 }]);
  now = 59_000;
  assert.equal(await settledAtOnce(sets.refresh('s')), true, 'still within the later cooldown');
  assert.equal(sent.length, 1);
  // The cooldown ends within a request's wait: the ask goes (the supervisor defers its fetch).
  now = 88_500;
  const c = sets.refresh('s');
  assert.equal(sent.length, 2);
  sets.update([{ id: 's', version: 5, state: 'expired', keys: [], nextFetchAt: 120_000 }]);
  const expired = await c;
  assert.equal(expired!.state, 'expired');
  assert.equal(expired!.keys, null, 'no keys when expired');
  sets.update([], ['s']);
  assert.equal(sets.get('s'), undefined, 'dropped');
});

/** Whether the promise settled before the event loop's next turn (no wait for an answer or a timer). */
async function settledAtOnce(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

test('worker key sets: an unknown kid within the cooldown while a fetch is under way: the waiter gets the new keys', async (t) => {
  let now = 0;
  const jwkOf = async (kid: string) => ({ ...(await exportJWK((await generateKeyPair('ES256')).publicKey)), kid, alg: 'ES256' });
  const [a, b] = [await jwkOf('a'), await jwkOf('b')];
  const caching = { cacheControl: 'max-age=3600' };
  let release!: () => void;
  const results: (() => Promise<FetchedKeySet>)[] = [async () => ({ keys: [a], caching }), async () => ({ keys: [a], caching })];
  results.push(() => new Promise((r) => (release = () => r({ keys: [b], caching })))); // the rotation's fetch, under way
  let fetches = 0;
  const workers = new Map<string, WorkerKeySets>();
  const deliver = (w: WorkerKeySets, m: ToWorker) => m.type === 'key-sets' && w.update(m.sets, m.dropped);
  const node = new KeySets({
    fetch: () => results[fetches++]!(),
    pushAll: (m) => workers.forEach((w) => deliver(w, m)),
    sendTo: (w, m) => deliver(workers.get((w as unknown as { id: string }).id)!, m),
    log: { info() {}, warn() {}, error() {} } as never,
    now: () => now,
  });
  t.after(() => node.stop());
  const asks: string[] = [];
  for (const id of ['w1', 'w2']) {
    const w = new WorkerKeySets((m) => m.type === 'key-refresh' && (asks.push(id), node.refresh(m.source, { id } as unknown as Worker)), () => now);
    workers.set(id, w);
  }
  const source = { id: 's', tenant: 't', kind: 'jwks' as const, url: 'http://idp/jwks', minRefreshSeconds: 1, maxStaleSeconds: 3600 };
  node.serve([source]);
  await waitFor('fresh', () => node.entries()[0]?.state === 'fresh');
  workers.forEach((w) => w.update(node.entries()));
  const [w1, w2] = [workers.get('w1')!, workers.get('w2')!];
  now = 5_000;
  await w1.refresh('s'); // w1 met an unknown kid (the other provider's): its cooldown starts
  assert.equal(fetches, 2);
  now = 5_950;
  void w2.refresh('s'); // the provider rotated: w2's ask is deferred by the node's cooldown (50 ms), then fetched
  await waitFor('the rotation\'s fetch under way', () => fetches === 3, { timeoutMs: 2_000 });
  const version = w1.get('s')!.version;
  const waits = [w1.refresh('s'), w1.refresh('s'), w1.refresh('s')]; // within w1's cooldown
  assert.deepEqual(asks, ['w1', 'w2', 'w1'], 'one ask for w1\'s waiters');
  release();
  for (const got of await Promise.all(waits)) {
    assert.notEqual(got!.version, version);
    assert.ok(got!.keys);
    assert.deepEqual(node.entries()[0]!.keys.map((k) => k.kid), ['b']);
    assert.equal(got!.version, node.entries()[0]!.version, 'the new keys');
  }
});

test('worker key sets: one worker, minRefreshSeconds 30: an answer without a fetch starts no cooldown of its own; a flood is refused at once; a rotation past the node\'s cooldown is fetched', async (t) => {
  let now = 0;
  const jwkOf = async (kid: string) => ({ ...(await exportJWK((await generateKeyPair('ES256')).publicKey)), kid, alg: 'ES256' });
  const [a, b] = [await jwkOf('a'), await jwkOf('b')];
  const caching = { cacheControl: 'max-age=3600' };
  let served = [a];
  let fetches = 0;
  const deliver = (m: ToWorker) => m.type === 'key-sets' && worker.update(m.sets, m.dropped);
  const node = new KeySets({
    fetch: async () => (fetches++, { keys: served, caching }),
    pushAll: deliver,
    sendTo: (_w, m) => deliver(m),
    log: { info() {}, warn() {}, error() {} } as never,
    now: () => now,
  });
  t.after(() => node.stop());
  let asks = 0;
  const worker = new WorkerKeySets((m) => m.type === 'key-refresh' && (asks++, node.refresh(m.source, {} as Worker)), () => now);
  node.serve([{ id: 's', tenant: 't', kind: 'jwks', url: 'http://idp/jwks', minRefreshSeconds: 30, maxStaleSeconds: 3600 }]);
  await waitFor('fresh', () => node.entries()[0]?.state === 'fresh');
  worker.update(node.entries());
  assert.equal(fetches, 1);
  // An unknown kid at 5 s, within the node's cooldown (the set carries nextFetchAt 30 s): no ask, no 2 s wait.
  now = 5_000;
  const bogus = worker.refresh('s');
  assert.equal(await settledAtOnce(bogus), true, 'a kid within the node\'s cooldown is refused at once');
  assert.equal(asks, 0);
  // Every further unknown kid of a flood: the same.
  now = 6_000;
  assert.equal(await settledAtOnce(worker.refresh('s')), true);
  assert.equal(asks, 0);
  assert.equal(fetches, 1);
  // The provider rotates; at 31 s the node may fetch (its last at 0 s): the worker asks and gets the new key.
  served = [b];
  now = 31_000;
  const rotated = worker.refresh('s');
  assert.equal(asks, 1, 'the ask goes as soon as the node may fetch');
  const got = await rotated;
  assert.equal(fetches, 2);
  assert.deepEqual(node.entries()[0]!.keys.map((k) => k.kid), ['b']);
  assert.equal(got!.version, node.entries()[0]!.version, 'the rotated keys, not the held set after a stall');
});
