import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressesOverlap, isLoopback, joinHostPort, parseHostPort, splitHostPort } from '../../src/shared/host-port.js';

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

test('splitHostPort: brackets, one colon, bare IPv6; a bad port or an open bracket is null', () => {
  assert.deepEqual(splitHostPort('example.com:8080'), { host: 'example.com', port: 8080 });
  assert.deepEqual(splitHostPort('example.com'), { host: 'example.com', port: null });
  assert.deepEqual(splitHostPort('203.0.113.7:4711'), { host: '203.0.113.7', port: 4711 });
  assert.deepEqual(splitHostPort('[2001:db8::1]:443'), { host: '2001:db8::1', port: 443 });
  assert.deepEqual(splitHostPort('[::1]'), { host: '::1', port: null });
  assert.deepEqual(splitHostPort('2001:db8::1'), { host: '2001:db8::1', port: null }, 'a bare IPv6 address has no port');
  for (const s of ['[::1', '[::1]x', '[::1]:', 'host:', 'host:65536', 'host:123456', 'host:8o', 'host: 80']) assert.equal(splitHostPort(s), null, s);
});

test('parseHostPort takes only ip:port and [ipv6]:port', () => {
  assert.deepEqual(parseHostPort('127.0.0.1:9180'), { host: '127.0.0.1', port: 9180 });
  assert.deepEqual(parseHostPort('[::1]:9180'), { host: '::1', port: 9180 });
  for (const s of ['localhost:9180', '127.0.0.1', '127.0.0.1:0', '::1:9180', '127.0.0.1:70000']) assert.equal(parseHostPort(s), null, s);
  assert.equal(joinHostPort('::1', 80), '[::1]:80');
  assert.equal(joinHostPort('10.0.0.1', 80), '10.0.0.1:80');
});
