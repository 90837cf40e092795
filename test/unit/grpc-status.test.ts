import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grpcMessage, grpcStatusOf, grpcTimeoutMs } from '../../src/worker/grpc/grpc-status.js';

test("the gateway's refusals map to the gRPC statuses a gRPC client expects", () => {
  assert.deepEqual([401, 403, 429, 502, 503, 504, 404].map(grpcStatusOf), [16, 7, 8, 14, 14, 4, 12]);
  assert.equal(grpcStatusOf(418), 2, 'anything else is UNKNOWN');
});

test('grpc-message carries the code and the trace id, percent-encoded where the wire needs it', () => {
  assert.equal(grpcMessage('Svc.Data.Unauthenticated', 'abc'), 'Svc.Data.Unauthenticated: Valid credentials are required (traceId abc)');
  assert.equal(grpcMessage(null, '', '100% zoë'), '100%25 zo%C3%AB');
});

test('grpc-timeout: every unit, at most 8 digits; a malformed one is ignored', () => {
  assert.equal(grpcTimeoutMs('5S'), 5_000);
  assert.equal(grpcTimeoutMs('2M'), 120_000);
  assert.equal(grpcTimeoutMs('1H'), 3_600_000);
  assert.equal(grpcTimeoutMs('250m'), 250);
  assert.equal(grpcTimeoutMs('1500u'), 2);
  assert.equal(grpcTimeoutMs('99999999n'), 100);
  for (const bad of [undefined, '', 'S', '5', '5s', '-5S', '123456789S', '1.5S']) assert.equal(grpcTimeoutMs(bad), null, String(bad));
  // Past setTimeout's range a timer fires at once: a 30-day deadline is none, not an instant one.
  assert.equal(grpcTimeoutMs('2000000S'), 2_000_000_000);
  assert.equal(grpcTimeoutMs('2592000S'), null);
  assert.equal(grpcTimeoutMs('99999999H'), null);
});
