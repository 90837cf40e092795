import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isValidHost } from '../../src/worker/host-header.js';

test('valid Host values: names, IPv4, bracketed IPv6, each with an optional port', () => {
  for (const h of ['', 'example.com', 'Example.COM.', 'a-b_c~d.test', 'localhost:8080', '127.0.0.1', '127.0.0.1:65535', '[::1]', '[::1]:80', '[2001:db8::1]', '[::ffff:10.0.0.1]:443', 'x:0']) {
    assert.equal(isValidHost(h), true, h);
  }
});

test('invalid Host values are refused', () => {
  for (const h of [
    'admin.test /x',
    'admin.test@evil',
    'public.test, admin.test',
    'public.test,admin.test',
    'a:b:c',
    '[::1',
    '[::1]x',
    '[::1]:',
    '[]',
    '[1]',
    '[v1.x]',
    '[fe80::1%25eth0]',
    'host:port',
    'host:',
    ':80',
    'host:123456',
    'host:65536',
    'host:+80',
    'a\tb',
    'a\u0001b',
    'a\u007fb',
    'a b',
    'a%2eb',
    'a*b',
    'a;b',
    'a/b',
    'a?b',
    'a#b',
    'ünï.test',
  ]) {
    assert.equal(isValidHost(h), false, JSON.stringify(h));
  }
});
