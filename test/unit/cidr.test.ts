import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cachedMatcher, cidrMatcher, parseCidr } from '../../src/steps/cidr.js';
import { canonicalIp } from '../../src/shared/cidr.js';

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

test('proxy-addr gets every block isIP and ipaddr.js accept: /0, zones, embedded IPv4 in any IPv6 form', () => {
  // Regression: proxy-addr refuses /0 and its ipaddr.js 1.x cannot parse ::1.2.3.4; the old
  // parser threw (not null) on fe80::%eth0/10, so a step setting with it was no issue but a crash.
  const all4 = cidrMatcher(['0.0.0.0/0']);
  assert.deepEqual(['1.2.3.4', '255.255.255.255', '::1'].map(all4), [true, true, false]);
  const all6 = cidrMatcher(['::/0']);
  assert.deepEqual(['::1', 'ffff::1', '1.2.3.4'].map(all6), [true, true, false]);
  const compat = cidrMatcher(['::1.2.3.4/128', '64:ff9b::/96']);
  assert.deepEqual(['::102:304', '::1.2.3.4', '64:ff9b::8.8.8.8', '1.2.3.4'].map(compat), [true, true, true, false]);
  assert.ok(parseCidr('fe80::%eth0/10'));
  assert.equal(cidrMatcher(['fe80::%eth0/10'])('fe80::1'), true);
});

test('an IPv4-mapped address in any spelling is its IPv4 address; mapped blocks of /96 and longer span IPv4', () => {
  // Regression: only the dotted ::ffff:a.b.c.d spelling matched IPv4 blocks.
  const m = cidrMatcher(['10.0.0.0/8']);
  for (const ip of ['::ffff:10.0.0.1', '::ffff:a00:1', '0:0:0:0:0:ffff:10.0.0.1', '::FFFF:A00:1']) assert.equal(m(ip), true, ip);
  const mapped = cidrMatcher(['::ffff:10.0.0.0/104']);
  assert.deepEqual(['10.1.2.3', '::ffff:a01:203', '11.0.0.1'].map(mapped), [true, true, false]);
  assert.equal(cidrMatcher(['::ffff:0:0/95'])('10.0.0.1'), false, 'a block shorter than /96 is IPv6 only');
  assert.equal(canonicalIp('::ffff:a00:1'), '10.0.0.1');
  assert.equal(canonicalIp('::1.2.3.4'), '::102:304', 'IPv4-compatible is not IPv4-mapped');
  assert.equal(canonicalIp('2001:DB8:0:0::1%eth0'), '2001:db8::1');
});

test('only strict addresses: the forms ipaddr.js and proxy-addr also read are refused as blocks and never match', () => {
  for (const s of ['127.1', '0x7f.0.0.1', '2130706433', '010.0.0.1', '10.0.0.0/255.0.0.0', 'loopback', '10.0.0.0/', '/8', ' 10.0.0.1', '1::2::3'])
    assert.equal(parseCidr(s), null, s);
  const m = cidrMatcher(['127.0.0.0/8']);
  for (const ip of ['127.1', '2130706433', '0x7f.0.0.1', '127.0.0.1 ', '']) assert.equal(m(ip), false, JSON.stringify(ip));
});

test('cachedMatcher keeps answers, bounded: a full cache evicts the least recently used address only', () => {
  const asked: string[] = [];
  const m = cachedMatcher((ip) => (asked.push(ip), ip === 'a'), 2);
  assert.deepEqual([m('a'), m('a'), m('b')], [true, true, false]);
  assert.deepEqual(asked, ['a', 'b']);
  m('c'); // full: b and a kept, a used first, so a goes
  assert.equal(m('b'), false);
  assert.deepEqual(asked, ['a', 'b', 'c'], 'b is still kept: one address went, not all');
  assert.equal(m('a'), true);
  assert.deepEqual(asked, ['a', 'b', 'c', 'a']);
});

test('cachedMatcher: a client rotating addresses evicts its own, never an address in steady use', () => {
  const asked: string[] = [];
  const m = cachedMatcher((ip) => (asked.push(ip), ip.startsWith('10.')), 4);
  const steady = ['10.0.0.1', '10.0.0.2'];
  for (const ip of steady) m(ip);
  for (let i = 0; i < 100; i++) {
    assert.equal(m(`192.0.2.${i}`), false);
    for (const ip of steady) assert.equal(m(ip), true);
  }
  assert.deepEqual(asked.filter((ip) => steady.includes(ip)), steady, 'each steady address was matched once, then always kept');
  assert.equal(asked.length, 102);
});
