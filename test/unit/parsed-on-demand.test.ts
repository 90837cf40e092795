import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ParsedOnDemand } from '../../src/shared/parsed-on-demand.js';

test('ParsedOnDemand: the query and the cookies read by their parsers, once, when first asked', () => {
  const p = new ParsedOnDemand('a=1&b=%32', ['host', 'x', 'cookie', 'sid=1; a=%41', 'cookie', 'sid=2; c=3']);
  const pairs = p.queryPairs;
  assert.deepEqual(pairs.map((q) => [q.name, q.value]), [['a', '1'], ['b', '2']]);
  assert.equal(p.queryPairs, pairs, 'parsed once');
  assert.deepEqual([p.cookie('sid'), p.cookie('a'), p.cookie('c'), p.cookie('none')], ['1', 'A', '3', undefined], 'lines are one list; the first of a name wins');
  assert.deepEqual(new ParsedOnDemand(null, []).queryPairs, []);
  assert.equal(new ParsedOnDemand(null, []).cookie('sid'), undefined);
});
