import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { TargetPool, type ConnectionAware } from '../../src/worker/target-pool.js';

/** An upstream that answers each request after `delayMs`, counting the connections it saw. */
async function upstream(t: { after(fn: () => unknown): void }, delayMs = 0): Promise<{ origin: string; connections: () => number; server: Server }> {
  let connections = 0;
  const server = createServer((req, res) => setTimeout(() => res.end(req.url), delayMs));
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections, server };
}

type Answer = { status: number; body: string } | Error;

/** A handler that gathers the answer and hands it, or the error, to `settle`; `onConnect` gets the abort. */
function answerHandler(settle: (a: Answer) => void, onConnect: (abort: (err?: Error) => void) => void = () => {}): Dispatcher.DispatchHandler {
  let status = 0;
  const chunks: Buffer[] = [];
  return {
    onConnect,
    onHeaders(s: number) {
      status = s;
      return true;
    },
    onData(c: Buffer) {
      chunks.push(c);
      return true;
    },
    onComplete() {
      settle({ status, body: Buffer.concat(chunks).toString() });
    },
    onError(err: Error) {
      settle(err);
    },
  } as Dispatcher.DispatchHandler;
}

/** Dispatches one GET through the pool; resolves with the status and body, or the error. */
function get(pool: TargetPool, path: string, headers: string[] = []): Promise<Answer> {
  return new Promise((resolve) => void pool.dispatch({ path, method: 'GET', headers }, answerHandler(resolve)));
}

const options = (connections: number) => ({ connections, client: { pipelining: 1, keepAliveTimeout: 4_000 } });

test('requests beyond the connection limit wait and are all answered, on no more connections than the limit', async (t) => {
  const up = await upstream(t, 30);
  const pool = new TargetPool(up.origin, options(2));
  t.after(() => pool.close());
  const answers = await Promise.all(Array.from({ length: 7 }, (_, i) => get(pool, `/r${i}`)));
  assert.deepEqual(
    answers.map((a) => (a instanceof Error ? a.message : a.body)),
    Array.from({ length: 7 }, (_, i) => `/r${i}`),
  );
  assert.equal(pool.size, 2);
  assert.equal(up.connections(), 2);
});

test('a freed connection is reused: sequential requests share one keep-alive connection', async (t) => {
  const up = await upstream(t);
  const pool = new TargetPool(up.origin, options(8));
  t.after(() => pool.close());
  for (let i = 0; i < 5; i++) {
    assert.equal((await get(pool, `/s${i}`)) instanceof Error, false);
    // undici frees a connection one event-loop turn after its answer (then 'drain').
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.equal(pool.size, 1);
  assert.equal(up.connections(), 1);
});

test('a request undici refuses before sending (a DEL in a header value) does not keep its connection busy', async (t) => {
  const up = await upstream(t);
  const pool = new TargetPool(up.origin, options(1));
  t.after(() => pool.close());
  for (let i = 0; i < 5; i++) {
    const r = await get(pool, '/bad', ['x-odd', 'a\x7fb']);
    assert.ok(r instanceof Error);
    assert.equal((r as Error & { code?: string }).code, 'UND_ERR_INVALID_ARG');
  }
  // With one connection allowed, a client left marked busy would make this wait for ever.
  const ok = await get(pool, '/good');
  assert.deepEqual(ok, { status: 200, body: '/good' });
  assert.equal(pool.size, 1);
});

test('a failed connection frees its client: with one connection allowed, ten requests to a closed port all fail, none waits', async (t) => {
  const up = await upstream(t);
  const port = Number(new URL(up.origin).port);
  await new Promise((r) => up.server.close(r)); // nothing listens there any more
  const pool = new TargetPool(`http://127.0.0.1:${port}`, options(1));
  t.after(() => pool.close());
  const answers = await Promise.all(Array.from({ length: 10 }, () => get(pool, '/down')));
  for (const a of answers) assert.ok(a instanceof Error && (a as Error & { code?: string }).code === 'ECONNREFUSED', String(a));
  assert.equal(pool.size, 1);
});

test('close lets running requests finish, fails the waiting ones, and refuses new ones', async (t) => {
  const up = await upstream(t, 50);
  const pool = new TargetPool(up.origin, options(1));
  const running = get(pool, '/running');
  const waiting = get(pool, '/waiting');
  await new Promise((r) => setTimeout(r, 10));
  const closed = pool.close();
  const later = await get(pool, '/later');
  assert.deepEqual(await running, { status: 200, body: '/running' });
  const w = await waiting;
  assert.ok(w instanceof Error && (w as Error & { code?: string }).code === 'UND_ERR_CLOSED', String(w));
  assert.ok(later instanceof Error && (later as Error & { code?: string }).code === 'UND_ERR_CLOSED', String(later));
  await closed;
});

// ---------------------------------------------------------------------------------
// The budget: at most maxPending requests wait, each for at most pendingTimeoutMs.

/** An upstream that holds every answer until release(); it records the paths in arrival order. */
async function heldUpstream(t: { after(fn: () => unknown): void }): Promise<{ origin: string; paths: string[]; release: () => void; held: () => number }> {
  const paths: string[] = [];
  let holding: (() => void)[] = [];
  let released = false;
  const server = createServer((req, res) => {
    paths.push(req.url!);
    const answer = () => res.end(req.url);
    if (released) answer();
    else holding.push(answer);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  const release = () => {
    released = true;
    const h = holding;
    holding = [];
    for (const a of h) a();
  };
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, release, held: () => holding.length };
}

/** Like get(), also handing out the abort undici (or the pool, while the request waits) gave the handler. */
function abortableGet(pool: TargetPool, path: string): { answer: Promise<Answer>; abort: () => void; settled: () => boolean } {
  let abort: ((err?: Error) => void) | null = null;
  let settled = false;
  const answer = new Promise<Answer>((resolve) => {
    const settle = (v: Answer) => {
      settled = true;
      resolve(v);
    };
    pool.dispatch({ path, method: 'GET', headers: [] }, answerHandler(settle, (a) => (abort = a)));
  });
  return { answer, abort: () => abort?.(new Error('client left')), settled: () => settled };
}

const code = (r: unknown) => (r instanceof Error ? (r as Error & { code?: string }).code : `answered ${JSON.stringify(r)}`);

async function until(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('a full queue refuses the next request at once with UpstreamBusy; the waiting ones are served in order once connections free up', async (t) => {
  const up = await heldUpstream(t);
  const pool = new TargetPool(up.origin, { connections: 1, maxPending: 2, pendingTimeoutMs: 60_000, client: { pipelining: 1 } });
  t.after(() => pool.close());
  const running = abortableGet(pool, '/running');
  await until('the first request at the upstream', () => up.held() === 1);
  const q1 = abortableGet(pool, '/q1');
  const q2 = abortableGet(pool, '/q2');
  assert.equal(pool.waiting, 2);
  const refused = abortableGet(pool, '/refused');
  // Refused inside dispatch: no timer, no connection, nothing sent.
  assert.equal(refused.settled(), true);
  assert.equal(code(await refused.answer), 'SY_UPSTREAM_BUSY');
  assert.equal(pool.waiting, 2);
  up.release();
  assert.deepEqual(await running.answer, { status: 200, body: '/running' });
  assert.deepEqual(await q1.answer, { status: 200, body: '/q1' });
  assert.deepEqual(await q2.answer, { status: 200, body: '/q2' });
  assert.deepEqual(up.paths, ['/running', '/q1', '/q2']);
  assert.equal(pool.waiting, 0);
});

test('a request that waits longer than pendingTimeoutMs is taken out of the queue and fails with UpstreamBusy', async (t) => {
  const up = await heldUpstream(t);
  const pool = new TargetPool(up.origin, { connections: 1, maxPending: 10, pendingTimeoutMs: 150, client: { pipelining: 1 } });
  t.after(() => pool.close());
  const running = abortableGet(pool, '/running');
  await until('the first request at the upstream', () => up.held() === 1);
  const t0 = performance.now();
  const waits = [abortableGet(pool, '/w1'), abortableGet(pool, '/w2')];
  await new Promise((r) => setTimeout(r, 60));
  const later = abortableGet(pool, '/w3'); // enqueued later: expires later, by its own deadline
  const first = await waits[0]!.answer;
  const firstMs = performance.now() - t0;
  assert.equal(code(first), 'SY_UPSTREAM_BUSY');
  assert.equal(code(await waits[1]!.answer), 'SY_UPSTREAM_BUSY');
  assert.ok(firstMs >= 140, `refused after ${firstMs} ms, before its deadline`);
  assert.equal(later.settled(), false, 'a younger request is not refused with the older ones');
  assert.equal(code(await later.answer), 'SY_UPSTREAM_BUSY');
  assert.ok(performance.now() - t0 >= 200, 'the younger request waited its own 150 ms');
  assert.equal(pool.waiting, 0);
  assert.equal(running.settled(), false, 'the running request is not touched by the deadline');
  up.release();
  assert.deepEqual(await running.answer, { status: 200, body: '/running' });
  assert.deepEqual(up.paths, ['/running'], 'no refused request reached the upstream');
});

test('a request aborted while it waits leaves the queue at once: its place is free, it never reaches the upstream', async (t) => {
  const up = await heldUpstream(t);
  const pool = new TargetPool(up.origin, { connections: 1, maxPending: 2, pendingTimeoutMs: 60_000, client: { pipelining: 1 } });
  t.after(() => pool.close());
  const running = abortableGet(pool, '/running');
  await until('the first request at the upstream', () => up.held() === 1);
  const a = abortableGet(pool, '/a');
  const gone = abortableGet(pool, '/gone');
  const b = abortableGet(pool, '/b-refused'); // the queue holds two
  assert.equal(code(await b.answer), 'SY_UPSTREAM_BUSY');
  gone.abort();
  assert.equal(gone.settled(), true);
  assert.match(String(await gone.answer), /client left/);
  assert.equal(pool.waiting, 1);
  const c = abortableGet(pool, '/c'); // takes the freed place instead of being refused
  assert.equal(c.settled(), false);
  assert.equal(pool.waiting, 2);
  up.release();
  assert.deepEqual(await running.answer, { status: 200, body: '/running' });
  assert.deepEqual(await a.answer, { status: 200, body: '/a' });
  assert.deepEqual(await c.answer, { status: 200, body: '/c' });
  assert.deepEqual(up.paths, ['/running', '/a', '/c']);
});

test('FIFO: waiting requests reach the upstream in arrival order, aborted ones skipped, across many entries', async (t) => {
  const up = await heldUpstream(t);
  const pool = new TargetPool(up.origin, { connections: 1, maxPending: 5_000, pendingTimeoutMs: 60_000, client: { pipelining: 1 } });
  t.after(() => pool.close());
  const running = abortableGet(pool, '/running');
  await until('the first request at the upstream', () => up.held() === 1);
  up.release(); // from here every request is answered at once, one connection, one at a time
  const n = 3_000; // past the queue's compaction threshold
  const all = Array.from({ length: n }, (_, i) => abortableGet(pool, `/${i}`));
  for (let i = 1; i < n; i += 7) all[i]!.abort();
  const answers = await Promise.all(all.map((r) => r.answer));
  await running.answer;
  const expected = ['/running'];
  for (let i = 0; i < n; i++) if (i % 7 !== 1) expected.push(`/${i}`);
  assert.deepEqual(up.paths, expected);
  assert.equal(answers.filter((a) => a instanceof Error).length, Math.ceil((n - 1) / 7));
  assert.equal(pool.waiting, 0);
  assert.equal(pool.size, 1);
});

test('an undici request() whose signal fires while it waits leaves the queue then, not when a connection frees up', async (t) => {
  const { request } = await import('undici');
  const up = await heldUpstream(t);
  const pool = new TargetPool(up.origin, { connections: 1, client: { pipelining: 1 } }); // no budget: as the steps' service pools
  t.after(() => pool.close());
  const running = abortableGet(pool, '/running');
  await until('the first request at the upstream', () => up.held() === 1);
  const call = request(`${up.origin}/late`, { dispatcher: pool as unknown as Dispatcher, signal: AbortSignal.timeout(50) });
  await assert.rejects(call, (err: Error) => err.name === 'TimeoutError' || /abort/i.test(err.message));
  assert.equal(pool.waiting, 0);
  up.release();
  assert.deepEqual(await running.answer, { status: 200, body: '/running' });
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(up.paths, ['/running']);
});

test('a handler is told its connection and whether it carried an earlier request; re-dispatched on it from onError after the upstream closed it, the request gets a new socket', async (t) => {
  // An upstream that answers the first request on each connection and resets it when the next one arrives.
  let connections = 0;
  const server = createNetServer((socket) => {
    connections++;
    let answered = false;
    socket.on('error', () => {});
    socket.on('data', () => {
      if (answered) return void socket.resetAndDestroy();
      answered = true;
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  const pool = new TargetPool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, options(1));
  t.after(() => pool.close());

  const told: boolean[] = [];
  const send = (resendOnError: boolean) =>
    new Promise<string>((resolve) => {
      let conn: Dispatcher | null = null;
      const opts = { path: '/', method: 'GET' as const };
      const handler = (again: boolean): Dispatcher.DispatchHandler & ConnectionAware =>
        ({
          onConnection(c: Dispatcher, reused: boolean) {
            conn = c;
            told.push(reused);
          },
          onConnect() {},
          onHeaders: () => true,
          onData: () => true,
          onComplete: () => resolve('ok'),
          onError(err: Error) {
            if (!again) return resolve((err as Error & { code?: string }).code ?? err.message);
            conn!.dispatch(opts, handler(false)); // from inside undici's onError, as the proxy does
          },
        }) as Dispatcher.DispatchHandler & ConnectionAware;
      pool.dispatch(opts, handler(resendOnError));
    });

  assert.equal(await send(false), 'ok');
  await new Promise((r) => setTimeout(r, 5)); // undici frees the connection a turn after the answer
  assert.equal(await send(false), 'ECONNRESET', 'the reused connection was reset under the request');
  assert.equal(await send(false), 'ok', 'the next request reconnected');
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(await send(true), 'ok', 're-sent on the same connection: a new socket answers');
  assert.deepEqual(told, [false, true, false, true], 'only requests on a connection that already carried one are told reused');
  assert.equal(connections, 3);
  assert.equal(pool.size, 1, 'the re-send did not take another connection');
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(await send(false), 'ECONNRESET', 'the connection went back to the pool after the re-send, and is reused');
});

test('onConnectError runs when a connection cannot be made', async (t) => {
  const up = await upstream(t);
  const port = Number(new URL(up.origin).port);
  await new Promise((r) => up.server.close(r));
  let failed = 0;
  const pool = new TargetPool(`http://127.0.0.1:${port}`, { ...options(2), onConnectError: () => failed++ });
  t.after(() => pool.close());
  const answers = await Promise.all([get(pool, '/a'), get(pool, '/b')]);
  for (const a of answers) assert.ok(a instanceof Error && (a as Error & { code?: string }).code === 'ECONNREFUSED', String(a));
  assert.equal(failed, 2);
});
