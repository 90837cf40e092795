import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket } from '../../src/shared/token-bucket.js';
import { RateLimitLeases } from '../../src/supervisor/rate-limit-leases.js';

test('a bucket gives burst tokens, then refills at the rate', () => {
  const b = new TokenBucket(2, 3, 0);
  assert.equal(b.take(5, 0), 3);
  assert.equal(b.take(1, 0), 0);
  assert.equal(b.msUntilToken(0), 500);
  assert.equal(b.take(1, 499), 0);
  assert.equal(b.take(1, 500), 1);
  assert.equal(b.take(10, 10_000), 3); // never above capacity
});

test('leases hand out exactly burst tokens whatever the number of workers', () => {
  let now = 0;
  for (const workers of [1, 2, 8]) {
    const leases = new RateLimitLeases(() => workers, () => now);
    let granted = 0;
    for (let i = 0; i < 100; i++) granted += leases.lease('k', 1, 3).granted;
    assert.equal(granted, 3);
    const denied = leases.lease('k', 1, 3);
    assert.equal(denied.granted, 0);
    assert.ok(denied.retryAfterMs > 0 && denied.retryAfterMs <= 1000);
    now += 1000;
  }
});

test('leases are batched while the bucket is full and shrink to one near empty', () => {
  const leases = new RateLimitLeases(() => 2, () => 0);
  const first = leases.lease('k', 1000, 1000).granted;
  assert.ok(first > 1, `first lease ${first}`);
  let last = first;
  let total = first;
  while (total < 1000) {
    last = leases.lease('k', 1000, 1000).granted;
    assert.ok(last >= 1);
    total += last;
  }
  assert.equal(total, 1000);
  assert.equal(last, 1);
});
