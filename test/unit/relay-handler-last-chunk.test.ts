import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayHandler } from '../../src/worker/relay-handler.js';
import { GenerationRequests, RequestLife } from '../../src/worker/request-life.js';
import type { Exchange } from '../../src/worker/exchange.js';

// Regression: the handler paused undici on the last body bytes when the client was slow.
// If the upstream then closed the connection (Connection: close), undici finished its
// parser on the socket's end, asserted it was not paused, and the throw killed the worker
// (seen in the streaming tests under CPU load: "assert(!this.paused)" in Parser.finish).

function fakeExchange(writable: boolean) {
  const calls: string[] = [];
  const ex = {
    method: 'GET',
    path: '/x',
    aborted: false,
    done: false,
    headersSent: false,
    writeHead: () => calls.push('head'),
    write: (chunk: Buffer, total: number | null) => (calls.push(`write ${chunk.length}/${total}`), writable),
    end: () => calls.push('end'),
    endWithoutBody: () => calls.push('endWithoutBody'),
    close: () => calls.push('close'),
    sendStatic: () => calls.push('envelope'),
  };
  return { ex: ex as unknown as Exchange, calls };
}

const env = { traceId: () => 'trace', log: { warn() {} } };
const lifeOf = (ex: Exchange) => new RequestLife(ex, null, new GenerationRequests(() => {}), env);
const head = (length: number) => [Buffer.from('content-type'), Buffer.from('text/plain'), Buffer.from('content-length'), Buffer.from(String(length))];

test('a known-length body: backpressure pauses undici before the last bytes, never on them', () => {
  const { ex, calls } = fakeExchange(false); // the client takes nothing at once
  let resumed = 0;
  const h = new RelayHandler(lifeOf(ex));
  h.onConnect(() => {});
  assert.equal(h.onHeaders(200, head(10), () => resumed++, 'OK'), true);
  assert.equal(h.onData(Buffer.alloc(4)), false, 'more is coming: pause');
  assert.equal(h.onData(Buffer.alloc(6)), true, 'the last bytes: do not pause');
  h.onComplete([]);
  assert.deepEqual(calls, ['head', 'write 4/10', 'write 6/10', 'end']);
  assert.equal(resumed, 0);
});

test('a body of unknown length still pauses undici under backpressure', () => {
  const { ex } = fakeExchange(false);
  const h = new RelayHandler(lifeOf(ex));
  h.onConnect(() => {});
  h.onHeaders(200, [Buffer.from('content-type'), Buffer.from('text/plain')], () => {}, 'OK');
  assert.equal(h.onData(Buffer.alloc(4)), false);
});

test('a drain that comes after the answer completed does not resume the connection (it may carry another request)', () => {
  const { ex } = fakeExchange(false);
  let resumed = 0;
  let drain: (() => void) | undefined;
  (ex as unknown as { write: unknown }).write = (_c: Buffer, _t: number | null, onDrain: () => void) => ((drain = onDrain), false);
  const h = new RelayHandler(lifeOf(ex));
  h.onConnect(() => {});
  h.onHeaders(200, [Buffer.from('content-type'), Buffer.from('text/plain')], () => resumed++, 'OK');
  h.onData(Buffer.alloc(4));
  drain!();
  assert.equal(resumed, 1, 'a drain while the answer streams resumes it');
  h.onComplete([]);
  drain!();
  assert.equal(resumed, 1, 'after the end: no resume');
});
