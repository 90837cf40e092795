import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_CACHED_TOKEN, VerifiedTokens } from '../../src/steps/identity/verified-tokens.js';

test('verified tokens: served until their exp, only for the key set version they were verified with, bounded by least recent use', () => {
  let now = 1_000;
  const cache = new VerifiedTokens(['sub'], 2, () => now);
  cache.set('a', { sub: 'a' }, 5_000, 1);
  assert.deepEqual(cache.get('a', 1), { sub: 'a' });
  assert.equal(cache.get('a', 2), undefined, 'another key set version');
  assert.equal(cache.get('a', 1), undefined, 'dropped on the mismatch');
  cache.set('a', { sub: 'a' }, 5_000, 1);
  cache.set('b', { sub: 'b' }, 5_000, 1);
  assert.ok(cache.get('a', 1)); // a is now the most recent
  cache.set('c', { sub: 'c' }, 5_000, 1);
  assert.equal(cache.size, 2);
  assert.equal(cache.get('b', 1), undefined, 'the least recently used went');
  assert.ok(cache.get('a', 1));
  now = 5_000;
  assert.equal(cache.get('a', 1), undefined, 'past exp (plus skew)');
});

test('verified tokens: only Authorization values up to 4 KiB are kept, each with only the claims the step reads', () => {
  const cache = new VerifiedTokens(['sub', 'exp', 'email']);
  const big = 'x'.repeat(200_000);
  const long = `Bearer ${'a'.repeat(MAX_CACHED_TOKEN - 7 + 1)}`;
  cache.set(long, { sub: 'l', exp: 99 }, Date.now() + 60_000, 1);
  assert.equal(cache.size, 0, 'a value over 4 KiB is not kept');
  assert.equal(cache.get(long, 1), undefined);
  const fits = `Bearer ${'a'.repeat(MAX_CACHED_TOKEN - 7)}`;
  cache.set(fits, { sub: 'f', exp: 99, email: 'f@example.test', blob: big, groups: ['a'] }, Date.now() + 60_000, 1);
  assert.equal(cache.size, 1);
  assert.deepEqual(cache.get(fits, 1), { sub: 'f', exp: 99, email: 'f@example.test' }, 'the unread claims are dropped');
});

test('verified tokens: only the payload\'s own claims are kept, never inherited ones', () => {
  const cache = new VerifiedTokens(['sub', 'toString', 'role'], 2, () => 0);
  const payload = Object.assign(Object.create({ role: 'admin' }) as Record<string, unknown>, { sub: 'a' });
  cache.set('t', payload, 5_000, 1);
  const kept = cache.get('t', 1)!;
  assert.deepEqual(Object.keys(kept), ['sub']);
  assert.equal(Object.hasOwn(kept, 'role'), false, 'an inherited claim is not copied');
  assert.equal(Object.hasOwn(kept, 'toString'), false, 'nor Object.prototype\'s');
});
