import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonical, parseState, stateDocument } from '../../src/admin/state/state-document.js';
import { fieldChanges, planState } from '../../src/admin/state/state-plan.js';

test('field changes are JSON pointers: objects by field, equal-length arrays by index, the rest whole; ~ and / escaped', () => {
  assert.deepEqual(fieldChanges({ a: 1, b: { c: 2 } }, { a: 1, b: { c: 3 } }), [{ pointer: '/b/c', old: 2, new: 3 }]);
  assert.deepEqual(fieldChanges({ x: [1, 2] }, { x: [1, 5] }), [{ pointer: '/x/1', old: 2, new: 5 }]);
  assert.deepEqual(fieldChanges({ x: [1, 2] }, { x: [1] }), [{ pointer: '/x', old: [1, 2], new: [1] }]);
  assert.deepEqual(fieldChanges({ 'a/b~c': 1 }, {}), [{ pointer: '/a~1b~0c', old: 1 }]);
  assert.deepEqual(fieldChanges({}, { n: null }), [{ pointer: '/n', new: null }]);
  assert.deepEqual(fieldChanges({ k: { z: 1, a: 2 } }, { k: { a: 2, z: 1 } }), [], 'key order is no change');
});

test('a plan: creates and updates from the file, deletes only when pruning, sorted by kind and name, with counts', () => {
  const e = (kind: 'route' | 'cluster', name: string, doc: Record<string, unknown>) => ({ kind, name, doc });
  const current = [e('route', 'b', { p: 1 }), e('route', 'a', { p: 1 }), e('cluster', 'gone', { t: 1 })];
  const desired = [e('route', 'a', { p: 2 }), e('route', 'b', { p: 1 }), e('route', 'c', { p: 1 })];
  const kept = planState(current, desired, false);
  assert.deepEqual(
    kept.items.map((i) => `${i.kind}/${i.name}:${i.action}`),
    ['route/a:update', 'route/b:unchanged', 'route/c:create'],
  );
  const pruned = planState(current, desired, true);
  assert.deepEqual(pruned.counts, { create: 1, update: 1, delete: 1, unchanged: 1 });
  assert.equal(pruned.items[0]!.action, 'delete');
  assert.equal(planState(current, current, true).changed, false);
});

test('a state document is checked whole: unknown fields, version, tenant, names and each entity by its schema, as pointers', () => {
  const r = parseState(
    { version: 2, tenant: 'other', extra: 1, routes: { 'bad name': {}, ok: { pathPrefix: 5 } }, clusters: [] },
    'acme',
  );
  assert.equal(r.ok, false);
  const paths = r.ok ? [] : r.errors.map((x) => x.path);
  for (const p of ['/extra', '/version', '/tenant', '/routes/bad name', '/routes/ok/pathPrefix', '/clusters']) assert.ok(paths.includes(p), `${p} in ${paths.join(', ')}`);
  const good = parseState({ version: 1, routes: { ping: { pathPrefix: '/p', directResponse: { statusCode: 200 } } } }, 'acme');
  assert.ok(good.ok);
  assert.deepEqual(good.ok && good.entities.map((x) => `${x.kind}/${x.name}`), ['route/ping']);
});

test('an export is canonical: every section, names and keys sorted, whatever order the store gave', () => {
  const a = stateDocument('t', [
    { kind: 'route', name: 'z', doc: { pathPrefix: '/z', directResponse: { statusCode: 200 } } },
    { kind: 'route', name: 'a', doc: { directResponse: { statusCode: 200 }, pathPrefix: '/a' } },
  ]);
  assert.equal(JSON.stringify(a), '{"version":1,"tenant":"t","clusters":{},"routes":{"a":{"directResponse":{"statusCode":200},"pathPrefix":"/a"},"z":{"directResponse":{"statusCode":200},"pathPrefix":"/z"}},"orchs":{},"certs":{}}');
  assert.deepEqual(canonical([{ b: 1, a: [{ d: 1, c: 2 }] }]), [{ a: [{ c: 2, d: 1 }], b: 1 }]);
});
