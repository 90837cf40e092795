import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GenerationRequests, RequestLife } from '../../src/worker/request-life.js';
import { RequestFlow } from '../../src/worker/flow.js';
import type { Exchange } from '../../src/worker/exchange.js';

function fakeExchange() {
  const sent: { status?: number; body: string }[] = [];
  const ex = {
    method: 'GET',
    path: '/x',
    query: null,
    headers: [],
    aborted: false,
    done: false,
    sendStatic(r: { head: string; body: string }) {
      if (this.aborted || this.done) return;
      this.done = true;
      sent.push({ body: r.body });
    },
    sendHead(status: number, body: string) {
      if (this.aborted || this.done) return;
      this.done = true;
      sent.push({ status, body });
    },
  };
  return { ex: ex as unknown as Exchange & { aborted: boolean; done: boolean }, sent };
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
  ex.aborted = true; // the client left while the answer was on its way
  life.clientLeft();
  life.reply(200, 'late', []);
  life.finish();
  assert.deepEqual(done, [[499, false]]);
});

test('the client leaving while a step waits runs the done hooks now; the generation counts the request until it finishes', () => {
  const { life, ex, done, requests, closed } = setup();
  requests.retire();
  ex.aborted = true;
  life.clientLeft();
  assert.deepEqual(done, [[499, false]]);
  assert.equal(closed(), 0, 'the step still works: the pools stay open');
  life.finish();
  assert.equal(closed(), 1, 'the last request of a retired generation closes its pools');
  assert.deepEqual(done, [[499, false]]);
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
  b.ex.aborted = true;
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
