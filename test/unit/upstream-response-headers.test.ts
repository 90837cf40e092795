import { test } from 'node:test';
import assert from 'node:assert/strict';
import { headerName, responseHeaders } from '../../src/worker/upstream-head.js';

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
  assert.equal(length, 42);
});

test('upstream head: hop-by-hop fields and those named in Connection are dropped', () => {
  const { headers, length } = responseHeaders(
    raw('Connection', 'keep-alive, X-Secret', 'Keep-Alive', 'timeout=5', 'Transfer-Encoding', 'chunked', 'X-Secret', 's', 'connection', 'x-other', 'X-Other', 'o', 'X-Kept', 'k', 'Upgrade', 'h2c'),
  );
  assert.deepEqual(headers, [['x-kept', 'k']]);
  assert.equal(length, null);
});

test('upstream head: values keep their bytes (latin1), names only are lower-cased', () => {
  const { headers } = responseHeaders(raw('X-Mixed', 'Value With CAPS \xe9'));
  assert.deepEqual(headers, [['x-mixed', 'Value With CAPS \xe9']]);
});

test('header names: known ones matched from their bytes in any case, others lower-cased; no false match', () => {
  assert.equal(headerName(Buffer.from('Content-Type')), 'content-type');
  assert.equal(headerName(Buffer.from('CONTENT-LENGTH')), 'content-length');
  assert.equal(headerName(Buffer.from('X-Request-Id')), 'x-request-id');
  // Same length as a known name, one byte apart, or differing only where case folding could confuse.
  assert.equal(headerName(Buffer.from('Content-Typf')), 'content-typf');
  assert.equal(headerName(Buffer.from('Dat_')), 'dat_');
  assert.equal(headerName(Buffer.from('Vary')), 'vary');
  assert.equal(headerName(Buffer.from('Very')), 'very');
});

test('upstream head: Content-Length read from its digits; an unsized answer has length null', () => {
  assert.equal(responseHeaders(raw('Content-Length', '0')).length, 0);
  assert.equal(responseHeaders(raw('Content-Length', '52428800')).length, 52428800);
  assert.equal(responseHeaders(raw('Transfer-Encoding', 'chunked')).length, null);
});

test('upstream head: a repeated value is reused only while its bytes match, even when the same buffer is rewritten', () => {
  const name = Buffer.from('Content-Type');
  const value = Buffer.from('text/plain');
  assert.deepEqual(responseHeaders([name, value]).headers, [['content-type', 'text/plain']]);
  assert.deepEqual(responseHeaders([name, Buffer.from('text/plain')]).headers, [['content-type', 'text/plain']]);
  // undici hands out views of a reused socket buffer: the cache must hold its own copy.
  value.write('text/plaim');
  assert.deepEqual(responseHeaders([name, value]).headers, [['content-type', 'text/plaim']]);
  assert.deepEqual(responseHeaders([name, Buffer.from('application/json')]).headers, [['content-type', 'application/json']]);
  assert.deepEqual(responseHeaders([Buffer.from('Connection'), Buffer.from('x-gone'), Buffer.from('X-Gone'), Buffer.from('1')]).headers, []);
});
