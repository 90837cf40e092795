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

test('a schema with an $id can be edited: each distinct schema compiles on its own', () => {
  // Regression: one shared ajv kept the first schema under its $id, so an edited schema
  // with the same $id never compiled again ("must be a valid JSON Schema") until a restart,
  // and a $ref could resolve to another route's (or tenant's) schema of that $id.
  const first = validatorOf({ $id: 'https://example.com/schemas/user', type: 'object', required: ['name'] });
  const edited = validatorOf({ $id: 'https://example.com/schemas/user', type: 'object', required: ['name', 'email'] });
  assert.equal(first({ name: 'a' }), true);
  assert.equal(edited({ name: 'a' }), false);
  assert.equal(edited({ name: 'a', email: 'b' }), true);
  // Another schema's $ref to that $id does not find it: schemas never see each other.
  assert.throws(() => validatorOf({ $ref: 'https://example.com/schemas/user' }));
});

test('a format ajv does not know is refused at compile time, not ignored', () => {
  assert.throws(() => validatorOf({ type: 'string', format: 'no-such-format' }), /unknown format/);
  // Regression (a review of this fix): ajv-formats' `url` backtracks with the square of
  // the input (60 KB held a worker 3 s); it is left out, so naming it is a compile issue.
  assert.throws(() => validatorOf({ type: 'string', format: 'url' }), /unknown format/);
  assert.equal(validatorOf({ type: 'string', format: 'date-time' })('2026-11-26T22:00:00Z'), true);
  assert.equal(validatorOf({ type: 'string', format: 'date-time' })('yesterday'), false);
});
