import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chainOrder } from '../../src/compiler/chain-order.js';
import type { OrchDoc } from '../../src/compiler/documents.js';

const node = (id: string) => ({ id, step: 'echo', settings: {} });
const ids = (doc: OrchDoc) => chainOrder(doc).units.map((u) => (u.type === 'node' ? doc.nodes[u.index]!.id : doc.groups![u.index]!.id));

test('units run in topological order, ties broken by nodes[] order', () => {
  const doc: OrchDoc = { nodes: [node('c'), node('a'), node('b')], links: [{ from: 'a', to: 'c' }, { from: 'b', to: 'c' }] };
  assert.deepEqual(ids(doc), ['a', 'b', 'c']);
  assert.deepEqual(ids({ nodes: [node('x'), node('y')], links: [] }), ['x', 'y']);
});

test('a group is one unit; a link to a grouped node is a link to its group', () => {
  const doc: OrchDoc = {
    nodes: [node('auth1'), node('auth2'), node('last'), node('first')],
    links: [{ from: 'first', to: 'auth1' }, { from: 'g', to: 'last' }],
    groups: [{ id: 'g', nodes: ['auth1', 'auth2'], merge: 'any' }],
  };
  assert.deepEqual(ids(doc), ['first', 'g', 'last']);
});

test('cycles, unknown ids, a node in two groups and bad merges are problems with pointers', () => {
  const cyc = chainOrder({ nodes: [node('a'), node('b')], links: [{ from: 'a', to: 'b' }, { from: 'b', to: 'a' }] });
  assert.equal(cyc.problems[0]!.code, 'Compile.Orch.LinkCycle');
  const unknown = chainOrder({ nodes: [node('a')], links: [{ from: 'a', to: 'zz' }] });
  assert.deepEqual(unknown.problems.map((p) => [p.pointer, p.code]), [['/links/0/to', 'Compile.Orch.Link']]);
  const twice = chainOrder({ nodes: [node('a')], links: [], groups: [{ id: 'g1', nodes: ['a'] }, { id: 'g2', nodes: ['a'] }] });
  assert.deepEqual(twice.problems.map((p) => p.pointer), ['/groups/1/nodes/0']);
  const merge = chainOrder({ nodes: [node('a')], links: [], groups: [{ id: 'g', nodes: ['a'], merge: 'most' }] });
  assert.deepEqual(merge.problems.map((p) => p.pointer), ['/groups/0/merge']);
  const dup = chainOrder({ nodes: [node('a'), node('a')], links: [] });
  assert.deepEqual(dup.problems.map((p) => p.code), ['Compile.Orch.Node']);
});
