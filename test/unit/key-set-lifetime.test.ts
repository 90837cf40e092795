import { test } from 'node:test';
import assert from 'node:assert/strict';
import { headerLifetimeSeconds, keySetLifetimeSeconds, KEY_CACHE_DEFAULT_SECONDS, KEY_CACHE_MAX_SECONDS } from '../../src/supervisor/key-sets/cache-lifetime.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

test('cache headers: max-age less Age, no-store/no-cache, Expires against Date, nothing', () => {
  assert.equal(headerLifetimeSeconds({ cacheControl: 'public, max-age=600' }, NOW), 600);
  assert.equal(headerLifetimeSeconds({ cacheControl: 'max-age=600', age: '100' }, NOW), 500);
  assert.equal(headerLifetimeSeconds({ cacheControl: 'max-age=60', age: '100' }, NOW), 0);
  assert.equal(headerLifetimeSeconds({ cacheControl: 'no-store' }, NOW), 0);
  assert.equal(headerLifetimeSeconds({ cacheControl: 'no-cache, max-age=600' }, NOW), 0);
  assert.equal(headerLifetimeSeconds({ cacheControl: 'max-age=600', expires: 'Thu, 01 Jan 2026 00:00:10 GMT' }, NOW), 600, 'max-age wins over Expires');
  assert.equal(headerLifetimeSeconds({ expires: 'Thu, 01 Jan 2026 00:05:00 GMT', date: 'Thu, 01 Jan 2026 00:00:00 GMT' }, NOW + 3_600_000), 300, 'against Date, not the local clock');
  assert.equal(headerLifetimeSeconds({ expires: 'Thu, 01 Jan 2026 00:05:00 GMT' }, NOW), 300);
  assert.equal(headerLifetimeSeconds({ expires: '0' }, NOW), 0, 'an invalid Expires is already expired');
  assert.equal(headerLifetimeSeconds({ cacheControl: 'public' }, NOW), null);
  assert.equal(headerLifetimeSeconds({}, NOW), null);
});

test('the lifetime used is clamped to [minRefreshSeconds, min(an hour, maxStaleSeconds / 2)]; the default without headers', () => {
  const day = 86_400;
  assert.equal(keySetLifetimeSeconds({}, NOW, 30, day), KEY_CACHE_DEFAULT_SECONDS);
  assert.equal(keySetLifetimeSeconds({ cacheControl: 'max-age=86400' }, NOW, 30, day), KEY_CACHE_MAX_SECONDS);
  assert.equal(keySetLifetimeSeconds({ cacheControl: 'max-age=86400' }, NOW, 30, 600), 300, 'half of maxStaleSeconds');
  assert.equal(keySetLifetimeSeconds({ cacheControl: 'no-store' }, NOW, 30, day), 30, 'never below minRefreshSeconds');
  assert.equal(keySetLifetimeSeconds({ cacheControl: 'max-age=5' }, NOW, 30, day), 30);
  assert.equal(keySetLifetimeSeconds({ cacheControl: 'max-age=120' }, NOW, 30, day), 120);
  assert.equal(keySetLifetimeSeconds({ cacheControl: 'max-age=120' }, NOW, 100, 60), 100, 'minRefreshSeconds wins over a short maxStaleSeconds');
});
