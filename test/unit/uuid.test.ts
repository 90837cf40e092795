import { test } from 'node:test';
import assert from 'node:assert/strict';
import { uuidV4 } from '../../src/shared/uuid.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('uuidV4 gives version-4, variant-1 UUIDs, all different, across several refills of its random batch', () => {
  const seen = new Set<string>();
  const n = 3 * 4096 + 17; // more than three batches
  for (let i = 0; i < n; i++) {
    const id = uuidV4();
    assert.match(id, V4);
    seen.add(id);
  }
  assert.equal(seen.size, n);
});

test('uuidV4 hex digits are evenly used (not a fixed or truncated source)', () => {
  const counts = new Map<string, number>();
  const n = 20_000;
  for (let i = 0; i < n; i++) {
    const h = uuidV4().replaceAll('-', '');
    // all but the version digit (12) and the variant digit (16)
    for (const c of h.slice(0, 12) + h.slice(13, 16) + h.slice(17)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  assert.equal(counts.size, 16);
  const expected = (n * 30) / 16;
  for (const [c, k] of counts) assert.ok(Math.abs(k - expected) < expected * 0.05, `digit ${c}: ${k} against about ${expected}`);
});
