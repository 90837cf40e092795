import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { TargetPool, type ConnectionAware } from '../../src/shared/target-pool.js';

/** An upstream that answers each request after `delayMs`, counting the connections it saw. */
async function upstream(t: { after(fn: () => unknown): void }, delayMs = 0): Promise<{ origin: string; connections: () => number; server: Server }> {
  let connections = 0;
  const server = createServer((req, res) => setTimeout(() => res.end(req.url), delayMs));
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections, server };
}

/** Dispatches one GET through the pool; resolves with the status and body, or the error. */
function get(pool: TargetPool, path: string, headers: string[] = []): Promise<{ status: number; body: string } | Error> {
  return new Promise((resolve) => {
    let status = 0;
    const chunks: Buffer[] = [];
    const handler: Dispatcher.DispatchHandler = {
      onConnect() {},
      onHeaders(s: number) {
        status = s;
        return true;
      },
      onData(c: Buffer) {
        chunks.push(c);
        return true;
      },
      onComplete() {
        resolve({ status, body: Buffer.concat(chunks).toString() });
      },
      onError(err: Error) {
        resolve(err);
      },
    } as Dispatcher.DispatchHandler;
    pool.dispatch({ path, method: 'GET', headers }, handler);
  });
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
