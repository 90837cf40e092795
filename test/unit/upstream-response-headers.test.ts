import { test } from 'node:test';
import assert from 'node:assert/strict';
import { responseHeaders } from '../../src/worker/proxy-handler.js';

// The proxy reads the upstream's raw head (undici's Buffer pairs) itself.
const raw = (...pairs: string[]) => pairs.map((s) => Buffer.from(s, 'latin1'));

test('upstream head: names lower-cased, repeated fields kept in order, Date and Content-Length left to uWS', () => {
  const { headers, length } = responseHeaders(
    raw('Content-Type', 'text/plain', 'Set-Cookie', 'a=1', 'Date', 'Thu, 01 Jan 2026 00:00:00 GMT', 'Content-Length', '42', 'set-cookie', 'b=2'),
  );
  assert.deepEqual(headers, [
    ['content-type', 'text/plain'],
    ['set-cookie', 'a=1'],
    ['set-cookie', 'b=2'],
  ]);
  assert.equal(length, '42');
});

test('upstream head: hop-by-hop fields and those named in Connection are dropped', () => {
  const { headers, length } = responseHeaders(
    raw('Connection', 'keep-alive, X-Secret', 'Keep-Alive', 'timeout=5', 'Transfer-Encoding', 'chunked', 'X-Secret', 's', 'connection', 'x-other', 'X-Other', 'o', 'X-Kept', 'k', 'Upgrade', 'h2c'),
  );
  assert.deepEqual(headers, [['x-kept', 'k']]);
  assert.equal(length, undefined);
});

test('upstream head: values keep their bytes (latin1), names only are lower-cased', () => {
  const { headers } = responseHeaders(raw('X-Mixed', 'Value With CAPS \xe9'));
  assert.deepEqual(headers, [['x-mixed', 'Value With CAPS \xe9']]);
});
