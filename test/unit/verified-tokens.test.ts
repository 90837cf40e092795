import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VerifiedTokens } from '../../src/steps/identity/verified-tokens.js';

test('verified tokens: served until their exp, only for the key set version they were verified with, bounded by least recent use', () => {
  let now = 1_000;
  const cache = new VerifiedTokens(2, () => now);
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
