import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { fingerprint, hasValidChecksum, isSubKeyShaped, newSubKey, randomBase62 } from '../../src/admin/keys/key-format.js';

test('a new sub-key is syk_ + 38 base62 characters and passes its own checksum', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const k = newSubKey();
    assert.match(k, /^syk_[0-9A-Za-z]{38}$/);
    assert.ok(isSubKeyShaped(k));
    assert.ok(hasValidChecksum(k), k);
    seen.add(k);
  }
  assert.equal(seen.size, 200, 'no repeats');
});

test('any single changed character fails the checksum', () => {
  const k = newSubKey();
  for (let i = 4; i < k.length; i++) {
    const c = k[i] === 'a' ? 'b' : 'a';
    const mutated = k.slice(0, i) + c + k.slice(i + 1);
    assert.equal(hasValidChecksum(mutated), false, `position ${i}`);
  }
});

test('wrong shapes fail without throwing: truncated, extended, foreign characters, other prefix', () => {
  const k = newSubKey();
  for (const bad of [k.slice(0, -1), `${k}0`, `${k.slice(0, -1)}-`, `syx_${k.slice(4)}`, 'syk_', '', `SYK_${k.slice(4)}`]) {
    assert.equal(hasValidChecksum(bad), false, bad);
  }
});

test('the random part carries about 190 bits: base62 output is uniform enough (every character appears)', () => {
  const s = randomBase62(62 * 200);
  assert.equal(s.length, 62 * 200);
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  assert.equal(counts.size, 62);
  for (const [c, n] of counts) assert.ok(n > 100 && n < 320, `${c} appeared ${n} times`);
});

test('the fingerprint is the SHA-256 hex of the plaintext and never contains it', () => {
  const k = newSubKey();
  assert.equal(fingerprint(k), createHash('sha256').update(k).digest('hex'));
  assert.ok(!fingerprint(k).includes(k.slice(4, 20)));
});
