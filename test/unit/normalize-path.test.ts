import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizePath } from '../../src/shared/normalize-path.js';

test('dot segments are resolved, encoded dots included', () => {
  assert.equal(normalizePath('/a/../b'), '/b');
  assert.equal(normalizePath('/a/./b'), '/a/b');
  assert.equal(normalizePath('/a/%2e%2e/admin'), '/admin');
  assert.equal(normalizePath('/a/%2E%2E/%2e/x'), '/x');
  assert.equal(normalizePath('/../../etc'), '/etc');
  assert.equal(normalizePath('/a/b/..'), '/a/');
  assert.equal(normalizePath('/a/.'), '/a/');
});

test('paths without dot segments are unchanged', () => {
  for (const p of ['/', '/api/v1/users', '/file.txt', '/a%20b', '/a..b/c', '/.well-known/x']) assert.equal(normalizePath(p), p);
});
