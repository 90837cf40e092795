import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cidrMatcher, parseCidr } from '../../src/steps/cidr.js';

test('IPv4 and IPv6 blocks match their addresses; v4-mapped peers match v4 blocks', () => {
  const m = cidrMatcher(['10.0.0.0/8', '192.168.1.7', '2001:db8::/32', '::1']);
  assert.equal(m('10.200.3.4'), true);
  assert.equal(m('11.0.0.1'), false);
  assert.equal(m('192.168.1.7'), true);
  assert.equal(m('192.168.1.8'), false);
  assert.equal(m('2001:db8:abcd::1'), true);
  assert.equal(m('2001:db9::1'), false);
  assert.equal(m('::1'), true);
  assert.equal(m('::ffff:10.1.2.3'), true);
  assert.equal(m('not-an-ip'), false);
});

test('bad blocks are refused', () => {
  for (const s of ['300.1.1.1', '10.0.0.0/33', '2001:db8::/129', '10.0.0.0/x', 'host.example']) assert.equal(parseCidr(s), null, s);
  assert.ok(parseCidr('0.0.0.0/0'));
  assert.ok(parseCidr('::/0'));
});
