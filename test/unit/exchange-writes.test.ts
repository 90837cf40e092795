import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import { Exchange } from '../../src/worker/exchange.js';
import { CORK_BUFFER } from '../../src/worker/engine/uws/cork-room.js';
import { TrustedProxies } from '../../src/worker/trusted-proxies.js';
import { LimitEvents } from '../../src/worker/limit-events.js';
import { LIMIT_DEFAULTS } from '../../src/shared/gateway-config-limits.js';
import { createLogger } from '../../src/shared/logger.js';
import { FakeUwsResponse, fakeUwsRequest } from '../helpers/fake-uws-response.js';
import type { HttpRequest, HttpResponse } from '../../src/worker/engine/uws/uws.js';
import { UwsDownstream } from '../../src/worker/engine/uws/uws-downstream.js';
import { RequestCallback } from '../../src/worker/engine/uws/request-callback.js';

// Regressions for the two ways the Exchange lost response bytes on slow sockets (the
// end-to-end proof is test/streaming-small-socket-buffers.test.ts):
//  - a non-optional uWS write larger than the room left in uWS's 16 KiB cork buffer
//    (a 64 KiB chunk of a chunked body, a whole body given to end());
//  - the next Content-Length chunk written from inside uWS's writable callback, whose
//    own callback uWS then dropped, so that chunk's unsent tail was skipped.

function exchange(room: number, sendTimeoutMs: number = LIMIT_DEFAULTS.sendTimeoutMs) {
  const res = new FakeUwsResponse(room);
  let finished = 0;
  const limits = { ...LIMIT_DEFAULTS, sendTimeoutMs };
  const ex = new Exchange(new UwsDownstream(res as unknown as HttpResponse, null, new RequestCallback()), fakeUwsRequest as unknown as HttpRequest, 'GET', '/x', () => false, () => finished++, new TrustedProxies([]), '', limits, new LimitEvents(createLogger('silent')));
  return { res, ex, finished: () => finished };
}

const bytes = (n: number, seed = 1) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7 + seed) & 0xff));

test('a chunked chunk larger than the cork buffer goes out in pieces that each fit one cork, in order', () => {
  const { res, ex } = exchange(1 << 20);
  const chunk = bytes(64 * 1024);
  ex.writeHead(200, 'OK', [['content-type', 'application/octet-stream']]);
  assert.equal(ex.write(chunk, null, () => {}), true);
  assert.equal(res.overflows, 0, 'no cork held more than its buffer');
  assert.ok(res.corks >= Math.ceil(chunk.length / CORK_BUFFER), `${res.corks} corks`);
  assert.deepEqual(Buffer.concat(res.body), chunk);
});

test('a small chunked chunk still goes out in one cork with the head', () => {
  const { res, ex } = exchange(1 << 20);
  ex.writeHead(200, 'OK', []);
  ex.write(bytes(8000), null, () => {});
  assert.equal(res.corks, 1);
  assert.equal(res.overflows, 0);
});

test('a whole Content-Length body larger than the cork buffer is sent with tryEnd and completes on writable', () => {
  const { res, ex, finished } = exchange(5000);
  const body = bytes(40_000);
  ex.writeHead(200, 'OK', []);
  assert.equal(ex.write(body, body.length, () => {}), false, 'backpressure');
  assert.equal(res.overflows, 0);
  while (!res.ended) res.drain(5000);
  assert.deepEqual(Buffer.concat(res.body), body);
  assert.equal(finished(), 1);
});

test('a large sendHead body is sent with tryEnd; a small one with one end()', () => {
  const big = exchange(3000);
  const text = 'x'.repeat(40_000);
  big.ex.sendHead(200, text, [['content-type', 'text/plain']]);
  assert.equal(big.res.overflows, 0);
  while (!big.res.ended) big.res.drain(3000);
  assert.equal(Buffer.concat(big.res.body).toString(), text);

  const small = exchange(1 << 20);
  small.ex.sendHead(200, 'hello', []);
  assert.equal(small.res.corks, 1);
  assert.equal(Buffer.concat(small.res.body).toString(), 'hello');
});

test('a large whole body ends the exchange with its last byte: 200 once sent, 499 when the client leaves before that', () => {
  const sent = exchange(3000);
  sent.ex.sendHead(200, 'x'.repeat(40_000), []);
  assert.equal(sent.ex.ended, false, 'bytes still wait for the socket');
  assert.equal(sent.finished(), 0);
  while (!sent.res.ended) sent.res.drain(3000);
  assert.deepEqual([sent.ex.ended, sent.ex.finalStatus, sent.finished()], [true, 200, 1]);

  const left = exchange(3000);
  left.ex.sendHead(200, 'x'.repeat(40_000), []);
  left.ex.sendHead(500, 'a second answer', []);
  left.res.drain(3000);
  left.res.abort();
  assert.deepEqual([left.ex.ended, left.ex.finalStatus, left.finished()], [true, 499, 1]);
  assert.equal(Buffer.concat(left.res.body).toString(), 'x'.repeat(6000), 'no second answer was written');
});

test('a held write the client takes nothing of for sendTimeoutMs closes the connection (499); one the client keeps taking from completes', async () => {
  const stuck = exchange(3000, 40);
  stuck.ex.sendHead(200, 'x'.repeat(40_000), []);
  await sleep(100);
  assert.deepEqual([stuck.res.closed, stuck.ex.finalStatus, stuck.finished()], [true, 499, 1]);

  // Each writable event that took bytes renews the wait: 40 drains 20 ms apart outlast 300 ms.
  const slow = exchange(1000, 300);
  slow.ex.sendHead(200, 'x'.repeat(40_000), []);
  while (!slow.res.ended) {
    await sleep(20);
    slow.res.drain(1000);
  }
  assert.deepEqual([slow.res.closed, slow.ex.finalStatus], [false, 200]);

  // A writable event that took nothing (uWS may call one spuriously) does not.
  const spurious = exchange(3000, 60);
  spurious.ex.sendHead(200, 'x'.repeat(40_000), []);
  for (let i = 0; i < 6; i++) {
    await sleep(20);
    if (!spurious.res.closed) spurious.res.drain(0);
  }
  assert.deepEqual([spurious.res.closed, spurious.ex.finalStatus], [true, 499]);

  // A streamed chunk: Content-Length and chunked alike; a producer that waits on its upstream is not the client's stall.
  for (const total of [64 * 1024, null]) {
    const held = exchange(3000, 40);
    held.ex.writeHead(200, 'OK', []);
    assert.equal(held.ex.write(bytes(20_000), total, () => {}), false);
    await sleep(100);
    assert.deepEqual([held.res.closed, held.ex.finalStatus], [true, 499], `total ${total}`);

    // Once the client took the held chunk, the wait is the producer's (its upstream's), not the client's.
    const taken = exchange(3000, 40);
    taken.ex.writeHead(200, 'OK', []);
    assert.equal(taken.ex.write(bytes(20_000), total, () => {}), false);
    taken.res.drain(30_000);
    await sleep(100);
    assert.deepEqual([taken.res.closed, taken.ex.ended], [false, false], `total ${total}: nothing is held`);
  }
});

test('Content-Length chunks under backpressure: every byte arrives once and in order', async () => {
  const { res, ex, finished } = exchange(3000);
  const chunks = [bytes(10_000, 1), bytes(10_000, 2), bytes(10_000, 3), bytes(10_000, 4)];
  const total = 40_000;
  ex.writeHead(200, 'OK', []);
  // The producer writes its next chunk as soon as onDrain runs, as undici does when it
  // has the next bytes buffered.
  let next = 0;
  const produce = (): void => {
    while (next < chunks.length) if (!ex.write(chunks[next++]!, total, produce)) return;
  };
  produce();
  for (let i = 0; i < 200 && !res.ended; i++) {
    res.drain(3000);
    await tick();
  }
  assert.equal(res.lostRegistration, false, 'no onWritable registered inside the writable callback');
  assert.deepEqual(Buffer.concat(res.body), Buffer.concat(chunks));
  assert.equal(finished(), 1);
});
