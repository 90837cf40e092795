import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayHandler } from '../../src/worker/relay-handler.js';
import { GenerationRequests } from '../../src/worker/generation-requests.js';
import { recordedExchange } from '../helpers/recording-downstream.js';

// Regression: the handler paused undici on the last body bytes when the client was slow.
// If the upstream then closed the connection (Connection: close), undici finished its
// parser on the socket's end, asserted it was not paused, and the throw killed the worker
// (seen in the streaming tests under CPU load: "assert(!this.paused)" in Parser.finish).

const env = { traceId: () => 'trace', log: { warn() {} }, metrics: null, requestIdHeader: null };

/** A real Exchange whose client takes nothing at once (every write that does not end the body reports backpressure). */
function slowClient() {
  const { ex, down } = recordedExchange();
  down.accepting = false;
  return { ex: ex.begin(null, new GenerationRequests(() => {}), env, null), down };
}

const head = (length: number) => [Buffer.from('content-type'), Buffer.from('text/plain'), Buffer.from('content-length'), Buffer.from(String(length))];

test('a known-length body: backpressure pauses undici before the last bytes, never on them', () => {
  const { ex, down } = slowClient();
  let resumed = 0;
  const h = new RelayHandler(ex);
  h.onConnect(() => {});
  assert.equal(h.onHeaders(200, head(10), () => resumed++, 'OK'), true);
  assert.equal(h.onData(Buffer.alloc(4)), false, 'more is coming: pause');
  assert.equal(h.onData(Buffer.alloc(6)), true, 'the last bytes: do not pause');
  h.onComplete([]);
  assert.deepEqual(down.got, ['head 200', 'body 4/10', 'body 6/10', 'end']);
  assert.equal(resumed, 0);
  assert.equal(ex.finalStatus, 200);
});

test('a body of unknown length still pauses undici under backpressure', () => {
  const { ex } = slowClient();
  const h = new RelayHandler(ex);
  h.onConnect(() => {});
  h.onHeaders(200, [Buffer.from('content-type'), Buffer.from('text/plain')], () => {}, 'OK');
  assert.equal(h.onData(Buffer.alloc(4)), false);
});

test('a drain that comes after the answer completed does not resume the connection (it may carry another request)', () => {
  const { ex, down } = slowClient();
  let resumed = 0;
  let drain: (() => void) | undefined;
  const write = down.write.bind(down);
  down.write = (h, id, chunk, total, close, onDrain, sink) => ((drain = onDrain), write(h, id, chunk, total, close, onDrain, sink));
  const h = new RelayHandler(ex);
  h.onConnect(() => {});
  h.onHeaders(200, [Buffer.from('content-type'), Buffer.from('text/plain')], () => resumed++, 'OK');
  h.onData(Buffer.alloc(4));
  drain!();
  assert.equal(resumed, 1, 'a drain while the answer streams resumes it');
  h.onComplete([]);
  drain!();
  assert.equal(resumed, 1, 'after the end: no resume');
});
