import { test } from 'node:test';
import assert from 'node:assert/strict';
import { relayedTrailers } from '../../src/worker/trailers.js';

test("an upstream's trailers reach the client without framing, hop-by-hop or pseudo fields", () => {
  const raw = [Buffer.from('Grpc-Status'), Buffer.from('0'), 'grpc-message', 'ok', 'content-length', '5', 'connection', 'close', ':status', '200', 'transfer-encoding', 'chunked', 'x-checksum', 'abc'];
  assert.deepEqual(relayedTrailers(raw), [['grpc-status', '0'], ['grpc-message', 'ok'], ['x-checksum', 'abc']]);
  assert.equal(relayedTrailers(['content-length', '1']), null, 'none left');
  assert.equal(relayedTrailers(null), null);
});
