import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rateLimit } from '../../src/steps/rate-limit.js';
import { RateLimitLeases } from '../../src/supervisor/rate-limit-leases.js';
import type { Flow, RateLimitClient, StepEnv } from '../../src/steps/step.js';
import { freshState } from '../../src/steps/step-state.js';

// Regression: a rate-limit keyed by a header kept every distinct value whole, in the
// worker (until 100,000 of them) and in the supervisor (no bound at all): distinct 15 KB
// values grew both by about 15 KB each.

test('a bucket keyed by a header holds a short key whatever the value sent', () => {
  const keys: string[] = [];
  const limits: RateLimitClient = { acquire: (b) => (keys.push(b), true), remaining: () => 1 };
  const run = rateLimit.create!({ requestsPerSecond: 1, burst: 10, key: { header: 'X-K' }, headers: false } as never, { bucket: 'route-b', tenant: 't', env: { rateLimits: limits } as unknown as StepEnv, state: freshState });
  const flowWith = (v: string | undefined) => ({ req: { header: (n: string) => (n === 'x-k' ? v : undefined) } }) as unknown as Flow;
  for (const v of ['short', 'x'.repeat(64), `a${'x'.repeat(15_000)}`, `b${'x'.repeat(15_000)}`, undefined]) run(flowWith(v));
  assert.equal(keys[0], 'route-b|h:short', 'short values stay readable');
  assert.equal(keys[1], `route-b|h:${'x'.repeat(64)}`);
  assert.ok(keys.every((k) => k.length <= 'route-b|h:'.length + 64), keys.map((k) => k.length).join(','));
  assert.notEqual(keys[2], keys[3], 'two long values are two buckets');
  assert.equal(keys[4], 'route-b|h:');
});

test('the supervisor keeps at most maxBuckets buckets; idle full ones go first', () => {
  let now = 0;
  const leases = new RateLimitLeases(() => 1, () => now, 1_000);
  leases.lease('busy', 1, 10); // an emptied bucket that must survive the idle ones' eviction
  for (let i = 0; i < 9; i++) leases.lease('busy', 1, 10);
  now = 5_000;
  for (let i = 0; i < 5_000; i++) leases.lease(`client-${i}`, 1_000, 1);
  assert.ok(leases.size <= 1_000, `size ${leases.size}`);
});

test('a flood of per-client keys never resets a bucket in steady use (least recently used go first)', () => {
  // Regression (a review of the cap): eviction went by creation order, so a route-wide
  // bucket, the oldest and busiest, was dropped and came back full: more than its limit passed.
  let now = 0;
  const leases = new RateLimitLeases(() => 1, () => now, 1_000);
  let granted = 0;
  for (let tick = 0; tick < 200; tick++) {
    now = tick * 100;
    for (let i = 0; i < 5; i++) granted += leases.lease('route-a', 10, 100).granted; // kept empty by its own traffic
    for (let i = 0; i < 100; i++) leases.lease(`flood-${tick}-${i}`, 1 / 60, 1);
  }
  const limit = 100 + 10 * (now / 1000); // burst + rps × elapsed seconds
  assert.ok(granted <= limit + 1, `route-a granted ${granted}, its limit allows ${limit}`);
  assert.ok(leases.size <= 1_000);
});
