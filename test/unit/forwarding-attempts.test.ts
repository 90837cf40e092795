import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errors, type Dispatcher } from 'undici';
import { proxy } from '../../src/worker/proxy.js';
import { RequestFlow } from '../../src/worker/flow.js';
import { GenerationRequests } from '../../src/worker/generation-requests.js';
import type { ClusterPools } from '../../src/worker/upstream-pools.js';
import { recordedExchange } from '../helpers/recording-downstream.js';

// The proxy stage's attempts driven by hand: a fake upstream calls the handler undici
// would call, in undici's order, and a real Exchange over a recording downstream records
// what the client got.

type Handler = Dispatcher.DispatchHandler & { onConnection?(conn: Dispatcher, reused: boolean): void };

const env = { traceId: () => 't', log: { warn() {} }, metrics: null, requestIdHeader: null };

const raw = (body: string) => [Buffer.from('content-length'), Buffer.from(String(body.length))];

/** Answers `status` with `body`, as undici does. */
function answer(h: Handler, status: number, body: string): void {
  h.onConnect!(() => {});
  h.onHeaders!(status, raw(body), () => {}, '');
  h.onData!(Buffer.from(body));
  h.onComplete!([]);
}

function pools(pick: () => Dispatcher): ClusterPools {
  return { spec: { headersMs: 30_000, bodyMs: 30_000 }, size: 1, pick, pickOther: pick, outcome: () => {}, answered: () => {}, failed: () => {}, addressOf: () => '127.0.0.1:1', retryPolicy: null } as unknown as ClusterPools;
}

test('a re-send on a new connection comes before the retry step and is not one of its attempts', async () => {
  const { ex, down } = recordedExchange();
  const flow = new RequestFlow(ex);
  flow.retry = { attempts: 2, statuses: new Set([503]), backoffMs: 1 };
  const statuses: number[] = [];
  flow.onDone((s) => statuses.push(s));
  const sent: string[] = [];
  // The connection the re-send goes on: it answers 503 (a status that retries).
  const conn = { dispatch: (_o: unknown, h: Handler) => (sent.push('resend'), answer(h, 503, 'busy'), true) } as unknown as Dispatcher;
  let picks = 0;
  const target = {
    dispatch(_o: unknown, h: Handler) {
      picks++;
      if (picks === 1) {
        // A reused keep-alive connection the upstream closed as the request went out.
        sent.push('first');
        h.onConnection!(conn, true);
        h.onConnect!(() => {});
        h.onError!(new errors.SocketError('other side closed'));
      } else {
        sent.push('retry');
        answer(h, 200, 'fine');
      }
      return true;
    },
  } as unknown as Dispatcher;
  let done = false;
  const requests = new GenerationRequests(() => (done = true));
  const life = ex.begin(flow, requests, env, null);
  requests.retire();
  proxy(life, pools(() => target), null);
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(sent, ['first', 'resend', 'retry'], 're-sent, then the retry step’s second attempt');
  assert.deepEqual(down.got, ['head 200', 'body 4/4', 'end'], 'the 503 was dropped, never relayed');
  assert.equal(ex.finalStatus, 200);
  assert.deepEqual(statuses, [200]);
  assert.equal(life.finished, true);
  assert.equal(done, true, 'the generation let go of the request');
});

test('a client that leaves aborts the upstream request and ends the request once, with 499', () => {
  const { ex, down } = recordedExchange();
  const flow = new RequestFlow(ex);
  const statuses: number[] = [];
  flow.onDone((s) => statuses.push(s));
  let handler: Handler | null = null;
  const aborted: string[] = [];
  const target = {
    dispatch(_o: unknown, h: Handler) {
      handler = h;
      h.onConnect!((err) => {
        aborted.push(String(err?.message));
        h.onError!(err!); // undici tells the handler of the abort it asked for
      });
      return true;
    },
  } as unknown as Dispatcher;
  proxy(ex.begin(flow, new GenerationRequests(() => {}), env, null), pools(() => target), null);
  assert.ok(handler);
  down.leave();
  assert.deepEqual(aborted, ['client aborted']);
  assert.deepEqual(statuses, [499]);
  assert.equal(ex.finalStatus, 499);
  assert.equal(ex.finished, true);
  assert.deepEqual(down.got, [], 'nothing written to a client that left');
});
