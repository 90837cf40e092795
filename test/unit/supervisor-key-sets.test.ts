import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Worker } from 'node:cluster';
import { KeySets } from '../../src/supervisor/key-sets/key-sets.js';
import type { FetchedKeySet } from '../../src/supervisor/key-sets/key-set-fetch.js';
import type { ToWorker } from '../../src/contracts/ipc.js';
import type { KeySourceSpec } from '../../src/contracts/key-sets.js';
import { Exposition } from '../../src/shared/metrics-exposition.js';
import { waitFor } from '../helpers/wait.js';

const spec = (minRefreshSeconds: number, maxStaleSeconds: number): KeySourceSpec => ({ id: 't jwks http://idp/jwks', tenant: 't', kind: 'jwks', url: 'http://idp/jwks', minRefreshSeconds, maxStaleSeconds });
const silent = { info() {}, warn() {}, error() {} } as never;

function harness(fetch: () => Promise<FetchedKeySet>) {
  const pushed: ToWorker[] = [];
  const answered: [string, ToWorker][] = [];
  let fetches = 0;
  const sets = new KeySets({
    fetch: () => {
      fetches++;
      return fetch();
    },
    pushAll: (m) => pushed.push(m),
    sendTo: (w, m) => answered.push([(w as unknown as { id: string }).id, m]),
    log: silent,
  });
  return { sets, pushed, answered, fetches: () => fetches };
}

const worker = (id: string) => ({ id }) as unknown as Worker;
const keys = (kid: string) => ({ keys: [{ kty: 'EC', kid }], caching: { cacheControl: 'max-age=3600' } });

test('key sets: one fetch for the workers waiting on a first fetch; a refresh within minRefreshSeconds beyond a request\'s wait is answered as is', async (t) => {
  let kid = 'a';
  const h = harness(async () => keys(kid));
  t.after(() => h.sets.stop());
  h.sets.serve([spec(60, 3600)]);
  h.sets.refresh(spec(60, 3600).id, worker('w1'));
  h.sets.refresh(spec(60, 3600).id, worker('w2'));
  await waitFor('answers', () => h.answered.length === 2);
  assert.equal(h.fetches(), 1, 'one fetch for the node');
  assert.deepEqual(h.answered.map(([w]) => w).sort(), ['w1', 'w2']);
  assert.equal(h.sets.entries()[0]!.state, 'fresh');
  kid = 'b';
  h.sets.refresh(spec(60, 3600).id, worker('w1'));
  await waitFor('answer', () => h.answered.length === 3);
  assert.equal(h.fetches(), 1, 'within minRefreshSeconds (60 s, past the 2 s wait): no fetch');
  assert.equal((h.answered[2]![1] as { sets: { keys: { kid: string }[] }[] }).sets[0]!.keys[0]!.kid, 'a');
  // A source no generation names any more is dropped, and the workers told.
  h.sets.serve([]);
  assert.deepEqual(h.pushed.at(-1), { type: 'key-sets', sets: [], dropped: [spec(60, 3600).id] });
  assert.deepEqual(h.sets.entries(), []);
});

test('key sets: a failing provider leaves the keys serving (stale) until maxStaleSeconds after the last success, then none (expired); counted', async (t) => {
  let up = true;
  const h = harness(async () => {
    if (!up) throw new Error('connect ECONNREFUSED');
    return keys('a');
  });
  t.after(() => h.sets.stop());
  const s = spec(1, 2);
  h.sets.serve([s]);
  await waitFor('fresh', () => h.sets.entries()[0]!.state === 'fresh');
  up = false;
  h.sets.refresh(s.id, worker('w1')); // after minRefreshSeconds: a fetch, which fails
  await waitFor('stale', () => h.sets.entries()[0]!.state === 'stale', { timeoutMs: 3_000 });
  assert.equal(h.sets.entries()[0]!.keys.length, 1, 'the last keys kept');
  const staleAt = Date.now();
  await waitFor('expired', () => h.sets.entries()[0]!.state === 'expired', { timeoutMs: 3_000 });
  assert.ok(Date.now() - staleAt <= 2_100);
  assert.deepEqual(h.sets.entries()[0]!.keys, []);
  const states = h.pushed.flatMap((m) => (m.type === 'key-sets' ? m.sets.map((e) => e.state) : []));
  assert.deepEqual(states, ['fresh', 'stale', 'expired'], 'each transition pushed once');
  const out = new Exposition();
  h.sets.write(out);
  assert.match(out.text(), /switchyard_auth_key_fetches_total\{tenant="t",source="http:\/\/idp\/jwks",result="ok"\} 1/);
  assert.match(out.text(), /switchyard_auth_key_set_state\{tenant="t",source="http:\/\/idp\/jwks",state="expired"\} 1/);
  up = true;
  await waitFor('fresh again (retried every minRefreshSeconds)', () => h.sets.entries()[0]!.state === 'fresh', { timeoutMs: 3_000 });
});

test('key sets: a worker asking while a fetch runs gets a fetch of its own (the running one may predate the rotation it met)', async (t) => {
  let now = 0;
  const results: (() => Promise<FetchedKeySet>)[] = [async () => keys('a')];
  let release!: () => void;
  results.push(() => new Promise((r) => (release = () => r(keys('a'))))); // under way when the rotation happens
  results.push(async () => keys('b'));
  const pushed: ToWorker[] = [];
  const answered: [string, ToWorker][] = [];
  let fetches = 0;
  const sets = new KeySets({ fetch: () => results[fetches++]!(), pushAll: (m) => pushed.push(m), sendTo: (w, m) => answered.push([(w as unknown as { id: string }).id, m]), log: silent, now: () => now });
  t.after(() => sets.stop());
  const s = spec(1, 3600);
  sets.serve([s]);
  await waitFor('fresh', () => sets.entries()[0]?.state === 'fresh');
  now = 5_000;
  sets.refresh(s.id, worker('w1')); // past minRefreshSeconds: fetch 2 starts
  sets.refresh(s.id, worker('w2')); // while it runs
  release();
  await waitFor('both answered', () => answered.length === 2, { timeoutMs: 3_000 });
  const kidOf = (m: ToWorker) => (m as { sets: { keys: { kid: string }[] }[] }).sets[0]!.keys[0]!.kid;
  assert.equal(fetches, 3, 'a third fetch, deferred to minRefreshSeconds after the second');
  assert.deepEqual(answered.map(([w, m]) => `${w}:${kidOf(m)}`), ['w1:a', 'w2:b']);
});
