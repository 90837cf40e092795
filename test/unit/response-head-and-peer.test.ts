import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatAddress } from '../../src/worker/engine/uws/peer-address.js';
import { headBlock, staticReply, statusLine } from '../../src/worker/response-head.js';

const bytes = (...b: number[]) => new Uint8Array(b).buffer;

test('formatAddress: IPv4 as dotted quad, and the same name again from the cache', () => {
  assert.equal(formatAddress(bytes(127, 0, 0, 1)), '127.0.0.1');
  assert.equal(formatAddress(bytes(10, 200, 3, 255)), '10.200.3.255');
  assert.equal(formatAddress(bytes(10, 200, 3, 255)), '10.200.3.255');
});

test('formatAddress: an IPv4-mapped IPv6 peer is shown as IPv4 (what X-Forwarded-For and ip buckets use)', () => {
  assert.equal(formatAddress(bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 9)), '192.168.1.9');
  // Not mapped: a non-zero byte in the prefix keeps it IPv6.
  assert.equal(formatAddress(bytes(0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 9)), '1::ffff:c0a8:109');
});

test('formatAddress: IPv6 per RFC 5952 (lower case, no leading zeros, longest zero run as ::)', () => {
  assert.equal(formatAddress(bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)), '::1');
  assert.equal(formatAddress(bytes(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)), '2001:db8::1');
  // Two zero runs: the longer one is compressed.
  assert.equal(formatAddress(bytes(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1)), '2001:db8:0:1::1');
  // Two runs of the same length: the first one is compressed.
  assert.equal(formatAddress(bytes(0x20, 0x01, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1)), '2001::1:0:0:1:1');
  // A single zero group is not compressed.
  assert.equal(formatAddress(bytes(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1)), '2001:db8:0:1:1:1:1:1');
  assert.equal(formatAddress(bytes(0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0xab, 0xcd, 0, 0x12, 0, 0, 0, 0)), 'fe80::abcd:12:0:0');
});

test('statusLine: the usual reason phrase is cached, an upstream own phrase is kept', () => {
  assert.equal(statusLine(200), '200 OK');
  assert.equal(statusLine(200, 'OK'), '200 OK');
  assert.equal(statusLine(200, 'Fine'), '200 Fine');
  assert.equal(statusLine(503), '503 Service Unavailable');
  assert.equal(statusLine(599), '599 Status');
});

test('headBlock joins the status line and header lines with CRLF, repeated names kept in order', () => {
  assert.equal(headBlock('200 OK', []), '200 OK');
  assert.equal(headBlock('200 OK', [['set-cookie', 'a=1'], ['x', 'y'], ['set-cookie', 'b=2']]), '200 OK\r\nset-cookie: a=1\r\nx: y\r\nset-cookie: b=2');
  const r = staticReply(302, '', { location: '/next' });
  assert.equal(r.head, '302 Found\r\nlocation: /next');
  assert.deepEqual(r.headers, [['location', '/next']]);
});
