import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstUncovered, isSubset, masksOf, requiredScope, unknownFamilies } from '../../src/admin/scopes.js';
import { FAMILIES } from '../../src/contracts/scopes.js';

const zero = () => Object.fromEntries(FAMILIES.map((f) => [f, 0]));

test('the families are the eight of the admin contract', () => {
  assert.deepEqual([...FAMILIES].sort(), ['audit', 'cluster', 'config', 'key', 'metrics', 'plugin', 'publish', 'sys']);
});

test('masksOf: read 1, write 2 + lifecycle 4, family wildcard 7, * everything', () => {
  assert.deepEqual(masksOf([]), zero());
  assert.deepEqual(masksOf(['*']), Object.fromEntries(FAMILIES.map((f) => [f, 7])));
  assert.deepEqual(masksOf(['config:read']), { ...zero(), config: 1 });
  assert.deepEqual(masksOf(['config:write']), { ...zero(), config: 6 });
  assert.deepEqual(masksOf(['config:read', 'config:write']), { ...zero(), config: 7 });
  assert.deepEqual(masksOf(['sys:*']), { ...zero(), sys: 7 });
  assert.deepEqual(masksOf(['config:read', 'publish:read']), { ...zero(), config: 1, publish: 1 });
  assert.deepEqual(masksOf(['plugin:write', 'key:*', 'audit:read']), { ...zero(), plugin: 6, key: 7, audit: 1 });
});

test('masksOf ignores unknown families and reports every known family', () => {
  const m = masksOf(['nosuch:read', 'cluster:read']);
  assert.deepEqual(Object.keys(m).sort(), [...FAMILIES].sort());
  assert.deepEqual(m, { ...zero(), cluster: 1 });
  assert.deepEqual(unknownFamilies(['nosuch:read', 'cluster:read', '*']), ['nosuch']);
});

test('requiredScope names read for read, write for write and lifecycle', () => {
  assert.equal(requiredScope('cluster', 'read'), 'cluster:read');
  assert.equal(requiredScope('config', 'write'), 'config:write');
  assert.equal(requiredScope('plugin', 'lifecycle'), 'plugin:write');
});

test('isSubset: a sub-key may not exceed its issuer', () => {
  const issuer = masksOf(['config:*', 'publish:read']);
  assert.equal(isSubset(masksOf(['config:read']), issuer), true);
  assert.equal(isSubset(masksOf(['config:write', 'publish:read']), issuer), true);
  assert.equal(isSubset(masksOf([]), issuer), true);
  assert.equal(isSubset(masksOf(['publish:write']), issuer), false);
  assert.equal(isSubset(masksOf(['key:read']), issuer), false);
  assert.equal(isSubset(masksOf(['*']), issuer), false);
  assert.equal(isSubset(masksOf(['*']), masksOf(['*'])), true);
});

test('firstUncovered names the first grant an issuer lacks, as a scope string', () => {
  const issuer = masksOf(['key:write', 'config:read']);
  assert.equal(firstUncovered('config:read', issuer), null);
  assert.equal(firstUncovered('key:write', issuer), null);
  assert.equal(firstUncovered('config:write', issuer), 'config:write');
  assert.equal(firstUncovered('key:read', issuer), 'key:read');
  assert.equal(firstUncovered('config:*', issuer), 'config:write');
  assert.equal(firstUncovered('*', issuer), 'sys:read');
  assert.equal(firstUncovered('*', masksOf(['*'])), null);
});
