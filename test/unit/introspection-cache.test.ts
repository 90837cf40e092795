import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IntrospectionCache, lifetimes, type CachePolicy, type Introspected } from '../../src/steps/identity/introspection-cache.js';
import { answerOf } from '../../src/steps/identity/introspection-client.js';

const policy = (p: Partial<CachePolicy> = {}): CachePolicy => ({ cacheMs: 60_000, negativeMs: 5_000, maxStaleMs: 0, maxEntries: 100, ...p });
const active = (expMs = Infinity, claims: Record<string, unknown> = { active: true }): Introspected => ({ active: true, claims, expMs });
const INACTIVE: Introspected = { active: false };
const T0 = 1_000_000;

test('an active answer is fresh for cacheSeconds, never past the token’s exp', () => {
  const c = new IntrospectionCache(policy());
  c.put('far', active(T0 + 3_600_000), T0);
  c.put('near', active(T0 + 10_000), T0);
  c.put('none', active(), T0);
  assert.ok(c.fresh('far', T0 + 59_999));
  assert.equal(c.fresh('far', T0 + 60_000), null, 'cacheSeconds bounds it');
  assert.ok(c.fresh('near', T0 + 9_999));
  assert.equal(c.fresh('near', T0 + 10_000), null, 'exp bounds it when sooner than cacheSeconds');
  assert.ok(c.fresh('none', T0 + 59_999), 'no exp: cacheSeconds alone');
  assert.deepEqual(lifetimes(active(T0 + 10_000), T0, policy({ maxStaleMs: 600_000 })), { freshUntil: T0 + 10_000, staleUntil: T0 + 10_000 });
});

test('an answer already past its exp is not kept; cacheSeconds 0 keeps nothing fresh', () => {
  const c = new IntrospectionCache(policy());
  c.put('old', active(T0 - 1), T0);
  assert.equal(c.size, 0);
  const none = new IntrospectionCache(policy({ cacheMs: 0 }));
  none.put('k', active(), T0);
  assert.equal(none.fresh('k', T0), null);
});

test('an inactive answer lives negativeCacheSeconds and is never a fail-static answer', () => {
  const c = new IntrospectionCache(policy({ maxStaleMs: 600_000 }));
  c.put('bad', INACTIVE, T0);
  assert.deepEqual(c.fresh('bad', T0 + 4_999), INACTIVE);
  assert.equal(c.fresh('bad', T0 + 5_000), null);
  assert.equal(c.stale('bad', T0 + 1), null);
  assert.equal(c.size, 0, 'dropped once neither fresh nor stale');
});

test('fail static: the last active answer serves until maxStaleSeconds after it, and never past exp; an inactive answer ends it', () => {
  const c = new IntrospectionCache(policy({ cacheMs: 2_000, maxStaleMs: 30_000 }));
  c.put('a', active(), T0);
  c.put('b', active(T0 + 10_000), T0);
  assert.equal(c.fresh('a', T0 + 2_000), null, 'a call is due');
  assert.ok(c.stale('a', T0 + 29_999));
  assert.equal(c.stale('a', T0 + 30_000), null);
  assert.ok(c.stale('b', T0 + 9_999));
  assert.equal(c.stale('b', T0 + 10_000), null, 'exp ends fail static');
  c.put('a', INACTIVE, T0 + 3_000);
  assert.equal(c.stale('a', T0 + 3_001), null, 'revoked since: no stale pass');
  const off = new IntrospectionCache(policy({ cacheMs: 2_000 }));
  off.put('a', active(), T0);
  assert.equal(off.stale('a', T0 + 2_001), null, 'maxStaleSeconds 0: off');
});

test('bounded: past maxEntries the least recently used token goes first', () => {
  const c = new IntrospectionCache(policy({ maxEntries: 3 }));
  for (let i = 0; i < 1_000; i++) c.put(`k${i}`, active(), T0);
  assert.equal(c.size, 3);
  assert.ok(c.fresh('k997', T0), 'k997 used: now the most recent');
  c.put('new', active(), T0);
  assert.equal(c.size, 3);
  assert.equal(c.fresh('k998', T0), null, 'the least recently used went');
  assert.ok(c.fresh('k997', T0));
  assert.ok(c.fresh('k999', T0));
});

test('single-flight: concurrent callers with one key share one call; the next call after it settles is new', async () => {
  const c = new IntrospectionCache(policy());
  let calls = 0;
  let release!: (a: Introspected) => void;
  const call = () => {
    calls++;
    return new Promise<Introspected>((r) => (release = r));
  };
  const waiting = Array.from({ length: 50 }, () => c.once('k', call));
  const other = c.once('other', async () => (calls++, INACTIVE));
  assert.equal(calls, 2, 'one call per key');
  assert.equal(c.inFlight, 2);
  release(active());
  const answers = await Promise.all(waiting);
  assert.ok(answers.every((a) => a === answers[0]));
  assert.deepEqual(await other, INACTIVE);
  assert.equal(c.inFlight, 0);
  await c.once('k', async () => (calls++, active()));
  assert.equal(calls, 3);
  // A failed call is shared too, and does not stick.
  const failing = [c.once('f', async () => Promise.reject(new Error('down'))), c.once('f', async () => active())];
  for (const p of failing) await assert.rejects(p, /down/);
  assert.equal(c.inFlight, 0);
});

test('RFC 7662 answers: only active === true passes; an exp or nbf that rules the token out now is inactive', () => {
  const now = T0 * 1000;
  assert.deepEqual(answerOf({ active: true, exp: T0 + 60, scope: 'a' }, now), { active: true, claims: { active: true, exp: T0 + 60, scope: 'a' }, expMs: (T0 + 60) * 1000 });
  assert.equal(answerOf({ active: true }, now).active, true);
  assert.equal((answerOf({ active: true }, now) as { expMs: number }).expMs, Infinity);
  for (const body of [{ active: 'true' }, { active: 1 }, { active: false, exp: T0 + 60 }, {}, { active: true, exp: T0 }, { active: true, exp: T0 - 1 }, { active: true, exp: '9999999999' }, { active: true, nbf: T0 + 60 }]) {
    assert.equal(answerOf(body, now).active, false, JSON.stringify(body));
  }
});
