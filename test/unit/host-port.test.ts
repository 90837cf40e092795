import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressesOverlap, isLoopback } from '../../src/shared/host-port.js';

test('two listen addresses overlap when equal or when either is a wildcard', () => {
  assert.equal(addressesOverlap('127.0.0.1', '127.0.0.1'), true);
  assert.equal(addressesOverlap('0.0.0.0', '127.0.0.1'), true);
  assert.equal(addressesOverlap('127.0.0.1', '::'), true);
  assert.equal(addressesOverlap('127.0.0.1', '10.0.0.1'), false);
});

test('loopback: 127/8, ::1, IPv4-mapped 127/8 and localhost', () => {
  for (const h of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', 'localhost']) assert.equal(isLoopback(h), true, h);
  for (const h of ['10.0.0.1', '0.0.0.0', '::', '::ffff:10.0.0.1']) assert.equal(isLoopback(h), false, h);
});
