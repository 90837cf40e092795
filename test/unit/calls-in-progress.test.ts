import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CallsInProgress } from '../../src/admin/calls-in-progress.js';

test('calls in progress: at most max per identity, each release counted once, identities apart', () => {
  const calls = new CallsInProgress(2);
  const a1 = calls.enter('a')!;
  const a2 = calls.enter('a')!;
  assert.equal(calls.enter('a'), null, 'a third call of a is refused');
  assert.ok(calls.enter('b'), 'b has its own count');
  a1();
  a1(); // a second release of the same call frees nothing more
  const a3 = calls.enter('a');
  assert.ok(a3, 'a released place is taken again');
  assert.equal(calls.enter('a'), null, 'the double release did not free a second place');
  a2();
  a3!();
  assert.ok(calls.enter('a') && calls.enter('a'), 'all released');
});
