import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestObserver, type RecordSink } from '../../src/worker/observe/observer.js';
import { DataMetrics } from '../../src/worker/observe/data-metrics.js';
import { staticReply } from '../../src/worker/response-head.js';
import type { RequestRecord } from '../../src/worker/observe/request-record.js';
import type { Downstream, RequestHead } from '../../src/worker/engine/contract.js';
import type { Exchange } from '../../src/worker/exchange.js';

/** uWS's request and response as an object any read of which fails the test. */
const untouchable = <T>(what: string): T =>
  new Proxy({}, { get: (_, k) => () => assert.fail(`${what}.${String(k)} was read for a request the access log does not write`) }) as T;

function sink(sampled: boolean): RecordSink & { written: RequestRecord[] } {
  const written: RequestRecord[] = [];
  return { written, sampled: () => sampled, write: (r) => void written.push(r) };
}

test('a fixed answer the access log does not sample makes no record: neither its headers nor its peer address are read', () => {
  const s = sink(false);
  const observer = new RequestObserver(new DataMetrics(), true, s);
  const client = () => assert.fail('the client address is not worked out');
  observer.fixedAnswered(staticReply(200, 'hi', {}), untouchable<RequestHead>('req'), untouchable<Downstream>('res'), 'GET', '/x', 'id-1', client);
  assert.equal(s.written.length, 0);
  assert.ok(observer.meters.take() !== null, 'the request is still counted');
});

test('an exchange is written only when it was sampled at its start', () => {
  const s = sink(true);
  const observer = new RequestObserver(new DataMetrics(), false, s);
  const ex = { aborted: false, headersSent: true, status: 200, finalStatus: 200, startedAt: performance.now(), method: 'GET', logged: false, grpc: null } as unknown as Exchange;
  observer.exchangeEnded(ex);
  assert.equal(s.written.length, 0, 'not sampled: no line');
  (ex as { logged: boolean }).logged = true;
  observer.exchangeEnded(ex);
  assert.equal(s.written.length, 1);
});

test("an exchange's record keeps the counters and upstream it ended with (its line is written later in the turn)", () => {
  const s = sink(true);
  const observer = new RequestObserver(new DataMetrics(), false, s);
  const ex = { logged: true, aborted: false, headersSent: true, status: 200, finalStatus: 200, startedAt: performance.now(), bytesReceived: 10, bytesSent: 20, upstream: '127.0.0.1:1', upstreamMs: 3, grpc: null };
  observer.exchangeEnded(ex as unknown as Exchange);
  // Bytes of a request body that arrive after the answer must not change the line.
  Object.assign(ex, { bytesReceived: 99, bytesSent: 99, upstream: null, upstreamMs: null });
  const r = s.written[0]!;
  assert.deepEqual([r.bytesReceived, r.bytesSent, r.upstream, r.upstreamMs], [10, 20, '127.0.0.1:1', 3]);
});
