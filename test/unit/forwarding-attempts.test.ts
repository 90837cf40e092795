import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errors, type Dispatcher } from 'undici';
import { proxy } from '../../src/worker/proxy.js';
import { RequestFlow } from '../../src/worker/flow.js';
import { GenerationRequests, RequestLife } from '../../src/worker/request-life.js';
import type { Exchange } from '../../src/worker/exchange.js';
import { finalStatus } from '../../src/worker/final-status.js';
import type { ClusterPools } from '../../src/worker/upstream-pools.js';

// The proxy stage's attempts driven by hand: a fake upstream calls the handler undici
// would call, in undici's order, and the Exchange records what the client got.

type Handler = Dispatcher.DispatchHandler & { onConnection?(conn: Dispatcher, reused: boolean): void };

function fakeExchange() {
  const got: string[] = [];
  const ex = {
    method: 'GET',
    path: '/x',
    query: null,
    headers: ['host', 'example.test'],
    remoteAddress: '127.0.0.1',
    localPort: '8080', scheme: 'http',
    requestId: '', requestIdHeader: null, setRequestId: () => {},
    aborted: false,
    done: false,
    ended: false,
    headersSent: false,
    status: 0,
    finalStatus: 0,
    owner: null as { exchangeEnded(): void } | null,
    aborts: [] as (() => void)[],
    /** The exchange ends once, deciding its final status, and tells its owner (as Exchange.finish). */
    finish() {
      if (this.ended) return;
      this.ended = this.done = true;
      this.finalStatus = finalStatus(this.status, this.aborted);
      this.owner?.exchangeEnded();
    },
    headerList: () => undefined,
    onAbort(h: () => void) {
      this.aborts.push(h);
    },
    writeHead(status: number) {
      got.push(`head ${status}`);
      this.status = status;
    },
    write: (chunk: Buffer) => (got.push(`body ${chunk.toString()}`), true),
    end() {
      got.push('end');
      this.finish();
    },
    sendStatic(r: { status: number; body: string }) {
      got.push(`envelope ${JSON.parse(r.body).code}`);
      this.status = r.status;
      this.finish();
    },
  };
  return { ex, got };
}

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
  const { ex, got } = fakeExchange();
  const flow = new RequestFlow(ex as unknown as Exchange);
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
  const life = new RequestLife(ex as unknown as Exchange, flow, requests, { traceId: () => 't', log: { warn() {} } });
  requests.retire();
  proxy(life, pools(() => target), null);
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(sent, ['first', 'resend', 'retry'], 're-sent, then the retry step’s second attempt');
  assert.deepEqual(got, ['head 200', 'body fine', 'end'], 'the 503 was dropped, never relayed');
  assert.deepEqual(statuses, [200]);
  assert.equal(life.finished, true);
  assert.equal(done, true, 'the generation let go of the request');
});

test('a client that leaves aborts the upstream request and ends the request once, with 499', () => {
  const { ex, got } = fakeExchange();
  const flow = new RequestFlow(ex as unknown as Exchange);
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
  const life = new RequestLife(ex as unknown as Exchange, flow, new GenerationRequests(() => {}), { traceId: () => 't', log: { warn() {} } });
  proxy(life, pools(() => target), null);
  assert.ok(handler);
  ex.aborted = true;
  ex.finish();
  for (const h of ex.aborts) h();
  assert.deepEqual(aborted, ['client aborted']);
  assert.deepEqual(statuses, [499]);
  assert.deepEqual(got, [], 'nothing written to a client that left');
});
