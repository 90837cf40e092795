import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rebaseQuery } from '../../src/worker/query-rebase.js';

test('rebaseQuery: a member’s removals and additions apply to the query as it now stands', () => {
  assert.equal(rebaseQuery('a=1&k=K', 'a=1&k=K', 'a=1&v=2'), 'a=1&v=2', 'unchanged since: the member’s query as made');
  // A sibling removed k=K first; this member removed debug and added v=2 to the query it saw.
  assert.equal(rebaseQuery('a=1&debug=1', 'a=1&k=K&debug=1', 'a=1&k=K&v=2'), 'a=1&v=2');
  // A sibling added v=2 first; this member (key-auth) removed k=K.
  assert.equal(rebaseQuery('a=1&k=K&v=2', 'a=1&k=K', 'a=1'), 'a=1&v=2');
  assert.equal(rebaseQuery('k=K&k=K&x', 'k=K&k=K', 'k=K'), 'k=K&x', 'a repeated segment is removed as many times as the member removed it');
  assert.equal(rebaseQuery('v=2', 'k=K', null), 'v=2');
  assert.equal(rebaseQuery('k=K', 'k=K&x=1', 'x=1'), null, 'nothing left: no query');
  assert.equal(rebaseQuery(null, 'k=K', 'k=K&v=2'), 'v=2', 'a query a sibling emptied takes the additions');
  assert.equal(rebaseQuery('a=1&&b=2&k=K', 'a=1&&b=2&k=K&z', 'a=1&&b=2&z'), 'a=1&&b=2', 'empty segments keep their place');
});
