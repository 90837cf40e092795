import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthThrottle } from '../../src/admin/auth-throttle.js';

test('an address is throttled after `burst` failures and freed as the allowance refills', () => {
  let now = 0;
  const t = new AuthThrottle({ burst: 3, perSecond: 2 }, () => now);
  for (let i = 0; i < 3; i++) {
    assert.equal(t.waitMs('10.0.0.1'), 0, `failure ${i + 1} is allowed`);
    t.failed('10.0.0.1');
  }
  assert.equal(t.waitMs('10.0.0.1'), 500, 'one token due in 1/2 s');
  assert.equal(t.throttled, 1);
  now = 499;
  assert.ok(t.waitMs('10.0.0.1') > 0);
  now = 500;
  assert.equal(t.waitMs('10.0.0.1'), 0);
});

test('addresses are counted apart, and an address that never failed waits for nothing', () => {
  const now = 0;
  const t = new AuthThrottle({ burst: 1, perSecond: 1 }, () => now);
  t.failed('a');
  assert.ok(t.waitMs('a') > 0);
  assert.equal(t.waitMs('b'), 0);
  assert.equal(t.waitMs('::1'), 0);
});

test('the address table stays bounded under a flood of distinct addresses', () => {
  let now = 0;
  const t = new AuthThrottle({ burst: 5, perSecond: 1 }, () => now);
  for (let i = 0; i < 25_000; i++) t.failed(`198.51.${i >> 8}.${i & 255}`);
  now = 60_000;
  t.failed('203.0.113.9');
  // @ts-expect-error: reading the private table to check its bound
  assert.ok(t.buckets.size <= 10_000);
});
