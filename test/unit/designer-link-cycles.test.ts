import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wouldCycle } from '../../console/src/designer/link-cycles.ts';

const doc = {
  nodes: [{ id: 'a', step: 'x' }, { id: 'b', step: 'x' }, { id: 'c', step: 'x' }, { id: 'd', step: 'x' }, { id: 'e', step: 'x' }],
  links: [{ from: 'a', to: 'b' }, { from: 'b', to: 'g' }],
  groups: [{ id: 'g', nodes: ['c', 'd'] }],
};
const unit = (id: string) => (id === 'c' || id === 'd' ? 'g' : id);

test('the link picker leaves out links that would close a cycle, through groups too', () => {
  assert.equal(wouldCycle(doc as never, 'b', 'a', unit), true, 'b → a closes a → b');
  assert.equal(wouldCycle(doc as never, 'g', 'a', unit), true, 'g → a closes a → b → g');
  assert.equal(wouldCycle(doc as never, 'c', 'b', unit), true, 'a member stands for its group');
  assert.equal(wouldCycle(doc as never, 'a', 'g', unit), false, 'a → g is just another path');
  assert.equal(wouldCycle(doc as never, 'e', 'a', unit), false);
  assert.equal(wouldCycle(doc as never, 'g', 'e', unit), false);
});
