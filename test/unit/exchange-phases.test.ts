import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GenerationRequests } from '../../src/worker/generation-requests.js';
import { RequestFlow } from '../../src/worker/flow.js';
import { finalStatus } from '../../src/worker/final-status.js';
import type { RequestTrace } from '../../src/worker/observe/request-trace.js';
import { recordedExchange } from '../helpers/recording-downstream.js';

// The owner's phases and its end, on a real Exchange over a recording downstream: it
// settles once (answered, cut or left), deciding its final status then, and its work ends
// once (the generation's count); the trace ends after both.

const env = { traceId: () => 'trace-1', log: { warn() {} }, metrics: null, requestIdHeader: null };

function setup() {
  let closed = 0;
  const requests = new GenerationRequests(() => closed++);
  const { ex, down } = recordedExchange();
  const flow = new RequestFlow(ex);
  const done: [number, boolean][] = [];
  flow.onDone((status, stepAnswered) => done.push([status, stepAnswered]));
  ex.begin(flow, requests, env, null);
  const sent = (): string[] => down.got.filter((l) => l.startsWith('body ')).map((l) => l.slice(5));
  return { requests, ex, down, sent, flow, done, life: ex, closed: () => closed };
}

/** A trace that records the statuses it ended with. */
const recordingTrace = (ends: number[]): RequestTrace => ({ end: (s: number) => ends.push(s) }) as unknown as RequestTrace;

test('finish() runs the done hooks once, with the status sent, however often it is called', () => {
  const { life, done } = setup();
  life.reply(201, 'made', []);
  life.finish();
  life.finish();
  assert.deepEqual(done, [[201, false]]);
  assert.equal(life.finished, true);
  assert.equal(life.finalStatus, 201);
});

test('an abort racing the completion: the done hooks run once, with 499', () => {
  const { life, down, done } = setup();
  down.leave(); // the client left while the answer was on its way
  life.reply(200, 'late', []);
  life.finish();
  assert.deepEqual(done, [[499, false]]);
  assert.deepEqual(down.got, [], 'nothing written to a client that left');
});

test('the client leaving while a step waits runs the done hooks now; the generation counts the request until it finishes', () => {
  const { life, down, done, requests, closed } = setup();
  requests.retire();
  down.leave();
  assert.deepEqual(done, [[499, false]]);
  assert.equal(closed(), 0, 'the step still works: the pools stay open');
  life.finish();
  assert.equal(closed(), 1, 'the last request of a retired generation closes its pools');
  assert.deepEqual(done, [[499, false]]);
});

test('the trace ends once, with the final status, after both the exchange and the work ended, in either order', () => {
  for (const exchangeFirst of [true, false]) {
    let closed = 0;
    const { ex, down } = recordedExchange();
    const ends: number[] = [];
    ex.begin(null, new GenerationRequests(() => closed++), env, recordingTrace(ends));
    ex.writeHead(200, 'OK', []);
    ex.write(Buffer.from('part'), null, () => {}); // the head went out
    if (exchangeFirst) {
      down.leave(); // the client left before the body ended
      assert.deepEqual(ends, [], 'the upstream call may still be open');
      ex.finish();
    } else {
      ex.finish(); // the upstream answer completed; its last bytes still wait for the client
      assert.deepEqual(ends, [], 'the exchange has not ended');
      down.leave();
    }
    ex.finish();
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
  assert.equal(a.sent().length, 1);
  assert.deepEqual(JSON.parse(a.sent()[0]!), { code: 'Svc.Data.UpstreamTimeout', message: JSON.parse(a.sent()[0]!).message, traceId: 'trace-1' });
  assert.deepEqual(a.done, [[504, false]]);

  const b = setup();
  b.down.leave();
  b.life.replyError('Svc.Data.UpstreamTimeout');
  assert.equal(b.sent().length, 0);
  assert.deepEqual(b.done, [[499, false]]);
});

test('a retired generation closes its pools when its last request ends, once', () => {
  let closed = 0;
  const requests = new GenerationRequests(() => closed++);
  const a = recordedExchange().ex.begin(null, requests, env, null);
  const b = recordedExchange().ex.begin(null, requests, env, null);
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
  const a = recordedExchange().ex.begin(null, requests, env, null);
  recordedExchange().ex.begin(null, requests, env, null).finish();
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

test('an exchange no cluster route began (a large fixed reply, a refusal) settles with its status and counts in no generation', () => {
  const { ex, down } = recordedExchange();
  ex.sendHead(200, 'fixed', []);
  assert.equal(ex.ended, true);
  assert.equal(ex.finalStatus, 200);
  assert.equal(ex.finished, false);
  ex.finish(); // nothing to count
  assert.deepEqual(down.got, ['head 200', 'body fixed', 'end']);
});

test('the final status: 499 when the client left (also after the head, also on a cut), the cut failure\'s status, else the status sent', () => {
  assert.equal(finalStatus(200, true), 499);
  assert.equal(finalStatus(0, true), 499);
  assert.equal(finalStatus(200, true, 502), 499);
  assert.equal(finalStatus(200, false, 504), 504);
  assert.equal(finalStatus(200, false), 200);
  assert.equal(finalStatus(101, false), 101);
});

test('a step that throws before it awaits: 500 Svc.Data.StepFailed, logged with the step, the done hooks with 500, the generation lets go of the request and the trace ends', async () => {
  for (const sync of [true, false]) {
    let closed = 0;
    const requests = new GenerationRequests(() => closed++);
    const { ex, down } = recordedExchange();
    const flow = new RequestFlow(ex);
    const ends: number[] = [];
    const done: number[] = [];
    flow.onDone((s) => done.push(s));
    ex.begin(flow, requests, env, recordingTrace(ends));
    requests.retire();
    const failures: unknown[] = [];
    const boom = new Error('step bug');
    const step = (f: RequestFlow) => {
      f.answeredBy = 'hmac-check'; // as the pipeline names each step before it runs it
      if (sync) throw boom;
      return Promise.reject(boom);
    };
    ex.requestSteps(step, () => assert.fail('forwarded'), (err, code) => failures.push(err, code));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(failures, [boom, 'hmac-check'], `${sync ? 'sync' : 'async'}: the failure is logged with the step`);
    assert.equal(down.got[0], 'head 500');
    assert.match(down.got[1]!, /"code":"Svc\.Data\.StepFailed"/);
    assert.deepEqual(done, [500]);
    assert.deepEqual(ends, [500], 'the trace ended');
    assert.equal(ex.finished, true);
    assert.equal(closed, 1, 'the retired generation closed its pools: the request was let go');
  }
});

test('a whole reply\'s own Connection lines are taken out; any that says close asks the engine for the close', () => {
  for (const [lines, close] of [[[['connection', 'keep-alive, close']], true], [[['Connection', 'keep-alive'], ['connection', 'close']], true], [[['connection', 'upgrade']], false], [[['x-connection', 'close']], false]] as [[string, string][], boolean][]) {
    const { ex, down } = recordedExchange();
    const closes: boolean[] = [];
    const reply = down.reply.bind(down);
    down.reply = (head, id, body, length, c, sink) => (closes.push(c), head.headers.some(([n]) => n.toLowerCase() === 'connection') ? assert.fail('a Connection line reached the engine') : reply(head, id, body, length, c, sink));
    ex.sendHead(413, 'too large', [['content-type', 'text/plain'], ...lines]);
    assert.deepEqual(closes, [close], JSON.stringify(lines));
  }
});
