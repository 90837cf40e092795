import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RespawnBackoff } from '../../src/supervisor/respawn-backoff.js';

test('the first respawn is immediate, then the delay doubles from the minimum up to the cap while the worker dies young', () => {
  const b = new RespawnBackoff(100, 1_000, 5_000);
  const delays = Array.from({ length: 7 }, () => b.next(50));
  assert.deepEqual(delays, [0, 100, 200, 400, 800, 1_000, 1_000]);
});

test('a worker that lived past the healthy threshold resets the backoff', () => {
  const b = new RespawnBackoff(100, 1_000, 5_000);
  for (let i = 0; i < 5; i++) b.next(10);
  assert.equal(b.next(5_000), 0, 'healthy for 5 s: immediate again');
  assert.equal(b.next(10), 100, 'and a young death after that starts over at the minimum');
  assert.equal(b.next(4_999), 200, 'just short of healthy still counts as young');
});

test('the defaults: immediate, then 100 ms doubling, capped at 10 s', () => {
  const b = new RespawnBackoff();
  const delays = Array.from({ length: 10 }, () => b.next(0));
  assert.deepEqual(delays, [0, 100, 200, 400, 800, 1_600, 3_200, 6_400, 10_000, 10_000]);
});
