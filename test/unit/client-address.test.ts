import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IDENTITY_HEADERS, clientAddress, isIdentityHeader } from '../../src/worker/client-address.js';
import { TrustedProxies } from '../../src/worker/trusted-proxies.js';
import { LimitEvents } from '../../src/worker/limit-events.js';
import { LIMIT_DEFAULTS } from '../../src/shared/gateway-config-limits.js';
import { createLogger } from '../../src/shared/logger.js';
import { Exchange } from '../../src/worker/exchange.js';
import { upstreamHeaders } from '../../src/worker/upstream-request-headers.js';
import { FakeUwsResponse } from '../helpers/fake-uws-response.js';
import type { HttpRequest, HttpResponse } from '../../src/worker/engine/uws/uws.js';
import { UwsDownstream } from '../../src/worker/engine/uws/uws-downstream.js';
import { RequestCallback } from '../../src/worker/engine/uws/request-callback.js';

const lb = new TrustedProxies(['10.0.0.0/8', '2001:db8:ff::/48']).trusts;

test('the peer is the client unless it is a trusted proxy', () => {
  assert.equal(clientAddress('192.0.2.1', '203.0.113.7', lb), '192.0.2.1', 'an untrusted peer’s chain is not read');
  assert.equal(clientAddress('10.0.0.1', undefined, lb), '10.0.0.1', 'a trusted peer with no chain is the client');
  assert.equal(clientAddress('10.0.0.1', '', lb), '10.0.0.1');
  assert.equal(clientAddress('10.0.0.1', ' , ,', lb), '10.0.0.1', 'empty list elements only');
});

test('behind trusted proxies: the right-most hop that is not trusted', () => {
  assert.equal(clientAddress('10.0.0.1', '203.0.113.7', lb), '203.0.113.7');
  assert.equal(clientAddress('10.0.0.1', '6.6.6.6, 203.0.113.7', lb), '203.0.113.7', 'what the client wrote to the left does not count');
  assert.equal(clientAddress('10.0.0.1', '6.6.6.6, 203.0.113.7, 10.1.1.1, 10.2.2.2', lb), '203.0.113.7', 'trusted hops are skipped');
  assert.equal(clientAddress('10.0.0.1', '6.6.6.6,203.0.113.7,,10.1.1.1', lb), '203.0.113.7', 'no spaces, an empty element');
  assert.equal(clientAddress('::ffff:10.0.0.1', '203.0.113.7', lb), '203.0.113.7', 'a v4-mapped peer matches its IPv4 block');
  assert.equal(clientAddress('2001:db8:ff::1', '2001:DB8::7', lb), '2001:db8::7', 'IPv6 peers and hops (lower case)');
});

test('every hop trusted: the left-most', () => {
  assert.equal(clientAddress('10.0.0.1', '10.9.9.9, 10.1.1.1', lb), '10.9.9.9');
});

test('hops with ports, brackets and v4-mapped forms are read as their address', () => {
  assert.equal(clientAddress('10.0.0.1', '203.0.113.7:4711', lb), '203.0.113.7');
  assert.equal(clientAddress('10.0.0.1', '[2001:db8::1]:443', lb), '2001:db8::1');
  assert.equal(clientAddress('10.0.0.1', '::ffff:203.0.113.7', lb), '203.0.113.7', 'one client, one form (rate-limit keys)');
  assert.equal(clientAddress('10.0.0.1', '203.0.113.7, 10.1.1.1:80', lb), '203.0.113.7', 'a trusted hop with a port is still trusted');
});

test('a hop that is not an address ends the walk at the address to its right (or the peer)', () => {
  assert.equal(clientAddress('10.0.0.1', 'not-an-address', lb), '10.0.0.1');
  assert.equal(clientAddress('10.0.0.1', '203.0.113.7, unknown', lb), '10.0.0.1', 'never past the unreadable hop to what the client wrote');
  assert.equal(clientAddress('10.0.0.1', '203.0.113.7, garbage, 10.1.1.1', lb), '10.1.1.1');
  assert.equal(clientAddress('10.0.0.1', 'garbage, 203.0.113.7', lb), '203.0.113.7', 'garbage left of the client is never reached');
  assert.equal(clientAddress('10.0.0.1', '1.2.3.4:x, 999.1.1.1', lb), '10.0.0.1');
});

test('TrustedProxies: none trusts nothing; answers are the matcher’s', () => {
  const none = new TrustedProxies([]);
  assert.equal(none.none, true);
  assert.equal(none.trusts('127.0.0.1'), false);
  const one = new TrustedProxies(['127.0.0.1/32']);
  assert.equal(one.none, false);
  for (let i = 0; i < 2; i++) {
    assert.equal(one.trusts('127.0.0.1'), true);
    assert.equal(one.trusts('::ffff:127.0.0.1'), true);
    assert.equal(one.trusts('127.0.0.2'), false);
    assert.equal(one.trusts('junk'), false);
  }
  for (let i = 0; i < 3000; i++) one.trusts(`192.0.${i >> 8}.${i & 255}`); // the cache stays bounded and right
  assert.equal(one.trusts('127.0.0.1'), true);
});

test('isIdentityHeader: every identity name, and no other', () => {
  for (const name of IDENTITY_HEADERS) assert.equal(isIdentityHeader(name), true, name);
  for (const name of ['x-forwarded-for', 'x-forwarded-ssl', 'x-forwarded-prefix', 'x-forwarded-method'])
    assert.equal(isIdentityHeader(name), true, `${name}: every x-forwarded-* counts`);
  for (const name of ['host', 'x-api-key', 'x-request-id', 'x-forwardedfor', 'forward', 'from', 'te', 'trailer', 'x-real', 'x-client-id', 'x-hostname', 'x-origin', 'client', 'cookie', '', 'x'])
    assert.equal(isIdentityHeader(name), false, name);
});

/** An Exchange over a fake uWS request with these headers, from `peer` (4 bytes). */
function exchangeFrom(peer: number[], headers: [string, string][], trusted: string[]) {
  let peerReads = 0;
  const res = new FakeUwsResponse(1 << 20);
  res.getRemoteAddress = () => {
    peerReads++;
    return new Uint8Array(peer).buffer;
  };
  const req = { getQuery: () => undefined, forEach: (cb: (k: string, v: string) => void) => headers.forEach(([k, v]) => cb(k, v)) };
  const ex = new Exchange(new UwsDownstream(res as unknown as HttpResponse, null, new RequestCallback()), req as unknown as HttpRequest, 'GET', '/x', () => false, () => {}, new TrustedProxies(trusted), '8080', LIMIT_DEFAULTS, new LimitEvents(createLogger('silent')));
  return { ex, peerReads: () => peerReads };
}

const IDENTITY: [string, string][] = [
  ['x-forwarded-for', '6.6.6.6'],
  ['forwarded', 'for=6.6.6.6'],
  ['x-real-ip', '6.6.6.6'],
  ['x-forwarded-port', '1'],
  ['true-client-ip', '6.6.6.6'],
  ['x-client-ip', '6.6.6.6'],
  ['x-forwarded-for', '7.7.7.7'],
];

test('Exchange: an untrusted peer’s identity headers never enter the request; the peer is not read without them', () => {
  const plain = exchangeFrom([192, 0, 2, 1], [['host', 'h'], ['x-a', '1']], ['10.0.0.0/8']);
  assert.equal(plain.peerReads(), 0, 'no identity header: no peer read at construction');
  const { ex } = exchangeFrom([192, 0, 2, 1], [['host', 'h'], ...IDENTITY, ['x-a', '1']], ['10.0.0.0/8']);
  assert.deepEqual(ex.headers, ['host', 'h', 'x-a', '1']);
  assert.equal(ex.clientAddress, '192.0.2.1');
  assert.deepEqual(upstreamHeaders(ex, null), ['host', 'h', 'x-a', '1', 'x-forwarded-for', '192.0.2.1', 'x-forwarded-proto', 'http', 'x-forwarded-host', 'h', 'x-forwarded-port', '8080']);
  // A step's own trust (ip-restriction's trustedProxies) still reads what the peer sent.
  assert.equal(ex.clientAddressTrusting((ip) => ip === '192.0.2.1'), '7.7.7.7');
});

test('Exchange: a trusted peer’s chain and identity headers are kept; the client is read from the chain', () => {
  const { ex } = exchangeFrom([10, 0, 0, 1], [['host', 'h'], ...IDENTITY], ['10.0.0.0/8']);
  assert.equal(ex.headers.length, 2 + IDENTITY.length * 2);
  assert.equal(ex.clientAddress, '7.7.7.7');
  const up = upstreamHeaders(ex, null);
  const pairs: string[] = [];
  for (let i = 0; i < up.length; i += 2) pairs.push(`${up[i]}: ${up[i + 1]}`);
  assert.deepEqual(pairs, [
    'host: h',
    'forwarded: for=6.6.6.6',
    'x-real-ip: 6.6.6.6',
    'true-client-ip: 6.6.6.6',
    'x-client-ip: 6.6.6.6',
    'x-forwarded-for: 6.6.6.6, 7.7.7.7, 10.0.0.1',
    'x-forwarded-proto: http',
    'x-forwarded-host: h',
    'x-forwarded-port: 8080',
  ]);
});
