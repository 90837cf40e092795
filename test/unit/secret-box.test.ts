import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SecretBox, isSealed, openStored, parseSealingKey } from '../../src/shared/secret-box.js';

test('a sealed value opens only with its key and its own context, and not once altered', () => {
  const box = new SecretBox(randomBytes(32));
  const sealed = box.seal('-----BEGIN PRIVATE KEY-----x', 'acme/cert/a');
  assert.ok(isSealed(sealed));
  assert.ok(!sealed.includes('PRIVATE KEY'));
  assert.notEqual(box.seal('same', 'c'), box.seal('same', 'c'), 'a fresh nonce each time');
  assert.equal(box.open(sealed, 'acme/cert/a'), '-----BEGIN PRIVATE KEY-----x');
  assert.throws(() => box.open(sealed, 'acme/cert/b'), 'another entity');
  assert.throws(() => new SecretBox(randomBytes(32)).open(sealed, 'acme/cert/a'), 'another key');
  // A character well inside the base64 (all 6 of its bits are data), swapped for another: it always alters a byte.
  const i = sealed.length - 10;
  const altered = sealed.slice(0, i) + (sealed[i] === 'A' ? 'B' : 'A') + sealed.slice(i + 1);
  assert.notEqual(altered, sealed);
  assert.throws(() => box.open(altered, 'acme/cert/a'));
  assert.equal(openStored('PEM as sent', 'x', null), 'PEM as sent');
  assert.throws(() => openStored(sealed, 'acme/cert/a', null), /secrets\.keyEnv is not set/);
});

test('the sealing key is 32 bytes written as 64 hex digits or base64', () => {
  assert.equal(parseSealingKey('ab'.repeat(32))!.length, 32);
  assert.equal(parseSealingKey(randomBytes(32).toString('base64'))!.length, 32);
  assert.equal(parseSealingKey(randomBytes(16).toString('base64')), null);
  assert.equal(parseSealingKey(undefined), null);
});
