import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RetryBudget } from '../../src/worker/retry-budget.js';

test('retries stay within percent of the last 10 s of requests plus the floor, and the window moves on', () => {
  let now = 1_000_000;
  const budget = new RetryBudget(20, 1, () => now);
  for (let i = 0; i < 100; i++) budget.request();
  let granted = 0;
  while (budget.tryRetry()) granted++;
  assert.equal(granted, 20 + 10, '20 % of 100, plus 1 a second over 10 s');
  now += 5_000;
  assert.equal(budget.tryRetry(), false, 'still inside the window');
  now += 6_000;
  assert.equal(budget.tryRetry(), true, 'the window moved past the spent retries');
});

test('a quiet cluster can still retry: the floor alone', () => {
  const budget = new RetryBudget(20, 1, () => 5_000);
  let granted = 0;
  while (budget.tryRetry()) granted++;
  assert.equal(granted, 10);
  assert.equal(new RetryBudget(0, 0, () => 5_000).tryRetry(), false);
});
