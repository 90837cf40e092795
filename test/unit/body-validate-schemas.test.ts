import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validatorOf } from '../../src/steps/body-validate.js';

test('a schema is compiled once per distinct text, whatever object carries it', () => {
  // Regression (memory): ajv keeps every schema object it compiles, and every dry-run,
  // publish and generation handed it new objects of the same schema.
  const schema = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };
  const first = validatorOf(schema);
  assert.equal(validatorOf(structuredClone(schema)), first);
  assert.equal(first({ name: 'x' }), true);
  assert.equal(first({}), false);
  assert.notEqual(validatorOf({ type: 'array' }), first);
});
