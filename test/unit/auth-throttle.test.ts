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

test('a full table never lets a throttled address go: 10,001 failing addresses later it is still throttled', () => {
  let now = 0;
  const t = new AuthThrottle({ burst: 2, perSecond: 0.01 }, () => now);
  t.failed('203.0.113.7');
  t.failed('203.0.113.7');
  assert.ok(t.waitMs('203.0.113.7') > 0, 'throttled before the flood');
  for (let i = 0; i < 10_001; i++) {
    now += 1;
    t.failed(`198.51.${i >> 8}.${i & 255}`);
  }
  assert.ok(t.waitMs('203.0.113.7') > 0, 'still throttled after 10,001 other failing addresses');
  // @ts-expect-error: reading the private table to check its bound
  assert.ok(t.buckets.size <= 10_000);
});

test('when every entry is throttled, addresses without one share an overflow allowance instead of going free', () => {
  const now = 0;
  const t = new AuthThrottle({ burst: 1, perSecond: 0.001 }, () => now, 100);
  for (let i = 0; i < 100; i++) t.failed(`10.0.0.${i}`);
  for (let i = 0; i < 100; i++) assert.ok(t.waitMs(`10.0.0.${i}`) > 0, `10.0.0.${i} throttled`);
  assert.equal(t.waitMs('10.9.9.1'), 0, 'a new address may try while the overflow allowance lasts');
  t.failed('10.9.9.1');
  assert.ok(t.waitMs('10.9.9.2') > 0, 'the overflow allowance spent: the next new address waits too');
  for (let i = 0; i < 100; i++) assert.ok(t.waitMs(`10.0.0.${i}`) > 0, `10.0.0.${i} still throttled`);
});

test('the least recently failed address that is not throttled makes room first', () => {
  let now = 0;
  const t = new AuthThrottle({ burst: 3, perSecond: 0.001 }, () => now, 3);
  for (let i = 0; i < 3; i++) t.failed('throttled'); // 0 left
  t.failed('old'); // 2 left, least recently failed
  t.failed('recent');
  t.failed('recent'); // 1 left
  now = 1;
  t.failed('new');
  // @ts-expect-error: reading the private table
  assert.deepEqual([...t.buckets.keys()].sort(), ['new', 'recent', 'throttled']);
  assert.ok(t.waitMs('throttled') > 0);
});
