import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatList, parseList } from '../../console/src/designer/schema-util.js';

test('regression: a list setting’s items keep their commas through an edit in the designer', () => {
  // The form split list text on commas: bot-detection's `^curl/\d{1,3}\.` became two
  // patterns when the operator added another line, and the dry-run passed.
  const deny = ['^curl/\\d{1,3}\\.', 'python-requests'];
  const text = formatList(deny);
  assert.equal(text, '^curl/\\d{1,3}\\.\npython-requests');
  assert.deepEqual(parseList(text, 'string').value, deny, 'round trip');
  assert.deepEqual(parseList(`${text}\nwget`, 'string').value, [...deny, 'wget'], 'a line added, the others unchanged');
  assert.deepEqual(parseList('^a{1,2}$', 'string').value, ['^a{1,2}$'], 'a single item with a comma stays one item');
  assert.deepEqual(parseList(' x \n\n y ', 'string').value, ['x', 'y'], 'blank lines and edge spaces dropped');
  assert.deepEqual(parseList('1\n2', 'integer').value, [1, 2]);
  assert.equal(parseList('', 'string').value, undefined, 'empty text removes the setting');
});
