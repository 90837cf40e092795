import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeDoc } from '../../console/src/designer/orch-doc.ts';

test('regression: a chain with duplicate node ids opens with each node under an id of its own', () => {
  const doc = normalizeDoc({
    nodes: [
      { id: 'a', step: 'request-id' },
      { id: 'a', step: 'echo' },
      { id: 'a-2', step: 'cors' },
      { id: 'a', step: 'access-log' },
    ],
    links: [{ from: 'a', to: 'a-2' }],
    groups: [{ id: 'g', nodes: ['a'], merge: 'all' }],
  });
  assert.deepEqual(doc.nodes.map((n) => [n.id, n.step]), [['a', 'request-id'], ['a-3', 'echo'], ['a-2', 'cors'], ['a-4', 'access-log']]);
  assert.deepEqual(doc.links, [{ from: 'a', to: 'a-2' }], 'links keep naming the first');
  assert.deepEqual(doc.groups![0]!.nodes, ['a']);
});
