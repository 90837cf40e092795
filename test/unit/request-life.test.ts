import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GenerationRequests, RequestLife } from '../../src/worker/request-life.js';
import { RequestFlow } from '../../src/worker/flow.js';
import type { Exchange } from '../../src/worker/exchange.js';
import { finalStatus } from '../../src/worker/final-status.js';

/** An exchange as RequestLife sees it: it ends once (answered or left), deciding its final status then, and tells its owner. */
function fakeExchange() {
  const sent: { status?: number; body: string }[] = [];
  const ex = {
    method: 'GET',
    path: '/x',
    query: null,
    headers: [],
    aborted: false,
    done: false,
    ended: false,
    status: 0,
    finalStatus: 0,
    requestId: '',
    trace: null as { end(status: number): void } | null,
    owner: null as { exchangeEnded(): void } | null,
    end() {
      if (this.ended) return;
      this.ended = this.done = true;
      this.finalStatus = finalStatus(this.status, this.aborted);
      this.owner?.exchangeEnded();
    },
    /** The client left (uWS's onAborted). */
    abort() {
      this.aborted = true;
      this.end();
    },
    sendStatic(r: { status: number; body: string }) {
      if (this.aborted || this.done) return;
      this.status = r.status;
      sent.push({ body: r.body });
      this.end();
    },
    sendHead(status: number, body: string) {
      if (this.aborted || this.done) return;
      this.status = status;
      sent.push({ status, body });
      this.end();
    },
  };
  return { ex: ex as unknown as Exchange & typeof ex, sent };
}

const env = { traceId: () => 'trace-1', log: { warn() {} } };

function setup() {
  let closed = 0;
  const requests = new GenerationRequests(() => closed++);
  const { ex, sent } = fakeExchange();
  const flow = new RequestFlow(ex);
  const done: [number, boolean][] = [];
  flow.onDone((status, stepAnswered) => done.push([status, stepAnswered]));
  const life = new RequestLife(ex, flow, requests, env);
  return { requests, ex, sent, flow, done, life, closed: () => closed };
}

test('finish() runs the done hooks once, with the status sent, however often it is called', () => {
  const { life, done } = setup();
  life.reply(201, 'made', []);
  life.finish();
  life.finish();
  assert.deepEqual(done, [[201, false]]);
  assert.equal(life.finished, true);
});

test('an abort racing the completion: the done hooks run once, with 499', () => {
  const { life, ex, done } = setup();
  ex.abort(); // the client left while the answer was on its way
  life.reply(200, 'late', []);
  life.finish();
  assert.deepEqual(done, [[499, false]]);
});

test('the client leaving while a step waits runs the done hooks now; the generation counts the request until it finishes', () => {
  const { life, ex, done, requests, closed } = setup();
  requests.retire();
  ex.abort();
  assert.deepEqual(done, [[499, false]]);
  assert.equal(closed(), 0, 'the step still works: the pools stay open');
  life.finish();
  assert.equal(closed(), 1, 'the last request of a retired generation closes its pools');
  assert.deepEqual(done, [[499, false]]);
});

test('the trace ends once, with the final status, after both the exchange and the work ended, in either order', () => {
  for (const exchangeFirst of [true, false]) {
    const { life, ex } = setup();
    const ends: number[] = [];
    ex.trace = { end: (s: number) => ends.push(s) };
    ex.status = 200; // the head went out
    if (exchangeFirst) {
      ex.abort(); // the client left before the body ended
      assert.deepEqual(ends, [], 'the upstream call may still be open');
      life.finish();
    } else {
      life.finish(); // the upstream answer completed; its last bytes still wait for the client
      assert.deepEqual(ends, [], 'the exchange has not ended');
      ex.abort();
    }
    life.finish();
    assert.deepEqual(ends, [499]);
  }
});

test('a done hook registered after the end is told at once', () => {
  const { life, flow } = setup();
  life.replyError('Svc.Data.UpstreamUnreachable');
  const late: number[] = [];
  flow.onDone((s) => late.push(s));
  assert.deepEqual(late, [502]);
});

test('replyError answers with the envelope and its traceId once, and not after the client left', () => {
  const a = setup();
  a.life.replyError('Svc.Data.UpstreamTimeout');
  a.life.replyError('Svc.Internal');
  assert.equal(a.sent.length, 1);
  assert.deepEqual(JSON.parse(a.sent[0]!.body), { code: 'Svc.Data.UpstreamTimeout', message: JSON.parse(a.sent[0]!.body).message, traceId: 'trace-1' });
  assert.deepEqual(a.done, [[504, false]]);

  const b = setup();
  b.ex.abort();
  b.life.replyError('Svc.Data.UpstreamTimeout');
  assert.equal(b.sent.length, 0);
  assert.deepEqual(b.done, [[499, false]]);
});

test('a retired generation closes its pools when its last request ends, once', () => {
  let closed = 0;
  const requests = new GenerationRequests(() => closed++);
  const a = new RequestLife(fakeExchange().ex, null, requests, env);
  const b = new RequestLife(fakeExchange().ex, null, requests, env);
  requests.retire();
  a.finish();
  a.finish();
  assert.equal(closed, 0);
  b.finish();
  assert.equal(closed, 1);
});

test('a generation counts its requests in flight; retired, it tells `drained` after closing its pools, at once when none is left', () => {
  const order: string[] = [];
  const requests = new GenerationRequests(() => order.push('pools'));
  const a = new RequestLife(fakeExchange().ex, null, requests, env);
  new RequestLife(fakeExchange().ex, null, requests, env).finish();
  assert.equal(requests.inFlight, 1);
  requests.retire(() => order.push('drained'));
  assert.deepEqual(order, []);
  a.finish();
  assert.equal(requests.inFlight, 0);
  assert.deepEqual(order, ['pools', 'drained']);

  const idle = new GenerationRequests(() => order.push('idle pools'));
  idle.retire(() => order.push('idle drained'));
  assert.deepEqual(order.slice(2), ['idle pools', 'idle drained']);
});

test('the final status: 499 when the client left (also after the head, also on a cut), the cut failure\'s status, else the status sent', () => {
  assert.equal(finalStatus(200, true), 499);
  assert.equal(finalStatus(0, true), 499);
  assert.equal(finalStatus(200, true, 502), 499);
  assert.equal(finalStatus(200, false, 504), 504);
  assert.equal(finalStatus(200, false), 200);
  assert.equal(finalStatus(101, false), 101);
});
