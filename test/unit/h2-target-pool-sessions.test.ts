import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constants, type ServerHttp2Session } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { errors, type Dispatcher } from 'undici';
import { H2TargetPool, type H2TargetPoolOptions } from '../../src/worker/engine/upstream-h2/h2-target-pool.js';
import { targetConnection } from '../../src/shared/upstream-connect.js';
import { UpstreamGuard } from '../../src/shared/upstream-guard.js';
import type { UpstreamRules } from '../../src/shared/upstream-policy.js';
import type { UpstreamTlsError } from '../../src/shared/upstream-tls.js';
import { UpstreamBusyError } from '../../src/worker/pending-queue.js';
import { connectFailed, errorCode, failureKind } from '../../src/worker/upstream-failure.js';
import { h2Upstream } from '../helpers/h2-server.js';
import { recordingHandler } from '../helpers/recording-handler.js';
import { makeCa } from '../helpers/tls-certs.js';
import { freePort } from '../helpers/ports.js';

/**
 * The HTTP/2 pool's connections: sessions within the peer's concurrency and the cluster's
 * budget, GOAWAY, idle close, close(), connect failures (refused, the upstream policy, TLS
 * and its ALPN) against real node:http2 servers.
 */

type Extra = Partial<Omit<H2TargetPoolOptions, 'target' | 'connection'>> & { guard?: UpstreamGuard; tenant?: string; tls?: { ca: string; verify: boolean } };

function poolOn(t: { after(fn: () => unknown): void }, target: string, o: Extra = {}): H2TargetPool {
  const protocol = target.startsWith('https://') ? 'h2' : 'h2c';
  const connection = targetConnection(o.guard ?? UpstreamGuard.allowAll(), o.tenant ?? 'default', target, { connectMs: 2_000, protocol, ...(o.tls ? { tls: o.tls } : {}) });
  const pool = new H2TargetPool({ target, connection, connections: 4, idleMs: 4_000, connectMs: 2_000, pingMs: 10_000, ...o });
  t.after(() => pool.close());
  return pool;
}

const send = (pool: H2TargetPool, path: string, opts: Partial<Dispatcher.DispatchOptions> = {}) => {
  const h = recordingHandler();
  pool.dispatch({ path, method: 'GET', headersTimeout: 5_000, bodyTimeout: 5_000, ...opts } as Dispatcher.DispatchOptions, h.handler);
  return h;
};

/** An upstream answering each request after `ms`, recording per session the most streams it had open at once. */
async function slowUpstream(t: { after(fn: () => unknown): void }, ms: number, maxConcurrentStreams: number) {
  const open = new Map<ServerHttp2Session, number>();
  const most = new Map<ServerHttp2Session, number>();
  const order: string[] = [];
  const up = await h2Upstream(
    t,
    (stream, headers, session) => {
      order.push(String(headers[':path']));
      open.set(session, (open.get(session) ?? 0) + 1);
      most.set(session, Math.max(most.get(session) ?? 0, open.get(session)!));
      stream.once('close', () => open.set(session, open.get(session)! - 1));
      setTimeout(() => {
        stream.respond({ ':status': 200 });
        stream.end(String(headers[':path']));
      }, ms);
    },
    { settings: { maxConcurrentStreams } },
  );
  return { up, order, most: () => [...most.values()] };
}

test("more requests than the peer's maxConcurrentStreams: another session, up to connections.perTarget; beyond, they wait in order", async (t) => {
  const two = await slowUpstream(t, 60, 2);
  const wide = poolOn(t, two.up.target, { connections: 2 });
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => send(wide, `/w${i}`).done));
  assert.deepEqual(answers.map((a) => a.error?.message ?? a.body.toString()), Array.from({ length: 6 }, (_, i) => `/w${i}`));
  assert.equal(two.up.sessions.length, 2, 'a second session opened when the first was full, none more');
  assert.deepEqual(two.most(), [2, 2], "no session ever had more streams than the peer's limit");

  const one = await slowUpstream(t, 40, 2);
  const narrow = poolOn(t, one.up.target, { connections: 1 });
  // Cold: the session takes them all while it connects and hands back what the peer's SETTINGS do not allow.
  const cold = await Promise.all(Array.from({ length: 4 }, (_, i) => send(narrow, `/c${i}`).done));
  assert.deepEqual(cold.map((a) => a.error?.message ?? a.body.toString()), ['/c0', '/c1', '/c2', '/c3']);
  const pending = Array.from({ length: 6 }, (_, i) => send(narrow, `/n${i}`).done);
  assert.equal(narrow.waiting, 4, 'two streams run, four wait');
  await Promise.all(pending);
  assert.deepEqual(one.order.slice(4), Array.from({ length: 6 }, (_, i) => `/n${i}`), 'first come, first sent');
  assert.equal(one.up.sessions.length, 1);
});

test('a full queue refuses at once with UpstreamBusy (503), as the HTTP/1.1 pool does; a wait past pendingTimeoutMs too', async (t) => {
  const { up } = await slowUpstream(t, 150, 1);
  const pool = poolOn(t, up.target, { connections: 1, maxPending: 1, pendingTimeoutMs: 80 });
  assert.equal((await send(pool, '/warm').done).status, 200);
  const running = send(pool, '/running');
  const waiting = send(pool, '/waiting');
  const refused = await send(pool, '/refused').done;
  assert.ok(refused.error instanceof UpstreamBusyError, String(refused.error));
  assert.equal(errorCode(refused.error), 'Svc.Data.UpstreamBusy');
  const late = await waiting.done;
  assert.ok(late.error instanceof UpstreamBusyError, 'waited past pendingTimeoutMs');
  assert.equal((await running.done).status, 200);
});

test('a GOAWAY mid-answer: the open stream finishes; a request after it goes on a new session', async (t) => {
  const up = await h2Upstream(t, (stream, headers, session) => {
    stream.respond({ ':status': 200 });
    if (headers[':path'] !== '/first') return void stream.end('second');
    stream.write('part one, ');
    session.goaway(constants.NGHTTP2_NO_ERROR, stream.id);
    setTimeout(() => stream.end('part two'), 150);
  });
  const pool = poolOn(t, up.target);
  const first = send(pool, '/first');
  await first.nextData();
  await new Promise((r) => setTimeout(r, 40)); // the GOAWAY is in
  const second = await send(pool, '/second').done;
  assert.equal(second.body.toString(), 'second');
  const r = await first.done;
  assert.equal(r.error, null);
  assert.equal(r.body.toString(), 'part one, part two');
  assert.equal(up.sessions.length, 2, 'the second request did not go on the session going away');
});

test('a handler learns its connection: the pool itself (a re-send goes there), reused from the second stream on', async (t) => {
  const { up } = await slowUpstream(t, 0, 100);
  const pool = poolOn(t, up.target);
  const a = await send(pool, '/a').done;
  const b = await send(pool, '/b').done;
  assert.equal(a.connection?.conn, pool);
  assert.deepEqual([a.connection?.reused, b.connection?.reused], [false, true]);
});

test('an idle session closes after idleMs; close() lets open streams finish, refuses new requests and fails waiting ones', async (t) => {
  const { up } = await slowUpstream(t, 100, 1);
  const idle = poolOn(t, up.target, { idleMs: 100 });
  assert.equal((await send(idle, '/once').done).status, 200);
  assert.equal(idle.size, 1);
  await new Promise((r) => setTimeout(r, 250));
  assert.equal(idle.size, 0, 'the pool let the idle session go');
  assert.ok(up.sessions[0]!.closed || up.sessions[0]!.destroyed, 'the upstream saw it close');

  const pool = poolOn(t, up.target, { connections: 1 });
  assert.equal((await send(pool, '/warm').done).status, 200);
  const running = send(pool, '/running');
  const waiting = send(pool, '/waiting');
  const closed = pool.close();
  assert.ok((await send(pool, '/late').done).error instanceof errors.ClientClosedError);
  assert.ok((await waiting.done).error instanceof errors.ClientClosedError);
  const ran = await running.done;
  assert.equal(ran.error?.message ?? ran.body.toString(), '/running', 'the open stream finished');
  await closed;
  assert.equal(pool.size, 0);
});

test('a refused target: onConnectError, the request fails with ECONNREFUSED before onConnect (nothing sent, another target may take it)', async (t) => {
  let connectErrors = 0;
  const pool = poolOn(t, `127.0.0.1:${await freePort()}`, { onConnectError: () => connectErrors++ });
  const r = await send(pool, '/').done;
  assert.equal((r.error as NodeJS.ErrnoException).code, 'ECONNREFUSED');
  assert.deepEqual(r.events, ['error']);
  assert.ok(connectFailed(r.error!));
  assert.equal(connectErrors, 1);
  assert.equal(pool.busy, 0);
});

test('an h2c target that does not speak HTTP/2 fails like a connect failure: an HTTP/1.1 server closes, a silent one times out at connectMs', async (t) => {
  const h1 = createHttpServer((_req, res) => res.end('h1'));
  const held: Socket[] = [];
  const silent = createNetServer((sock) => void held.push(sock));
  for (const s of [h1, silent]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(() => {
    h1.closeAllConnections();
    for (const sock of held) sock.destroy();
    h1.close();
    silent.close();
  });
  let connectErrors = 0;
  const h1Pool = poolOn(t, `127.0.0.1:${(h1.address() as AddressInfo).port}`, { onConnectError: () => connectErrors++ });
  const closed = await send(h1Pool, '/').done;
  assert.deepEqual(closed.events, ['error'], 'nothing was sent: another target may take it');
  assert.ok(closed.error instanceof errors.SocketError, String(closed.error));

  const silentPool = poolOn(t, `127.0.0.1:${(silent.address() as AddressInfo).port}`, { connectMs: 150, onConnectError: () => connectErrors++ });
  const started = performance.now();
  const timedOut = await send(silentPool, '/').done;
  assert.ok(timedOut.error instanceof errors.ConnectTimeoutError, String(timedOut.error));
  assert.ok(performance.now() - started >= 140);
  assert.ok(connectFailed(timedOut.error));
  assert.equal(connectErrors, 2, 'both targets are held off');
  assert.equal(silentPool.size + h1Pool.size, 0);
});

test("the upstream policy holds: a tenant's session to loopback is refused before any connection", async (t) => {
  const { up } = await slowUpstream(t, 0, 100);
  const rules: UpstreamRules = { allow: [], deny: [], tenants: {}, admin: { host: '127.0.0.1', port: 1 }, data: { host: '127.0.0.1', port: 2 } };
  const guard = UpstreamGuard.from(rules);
  let connectErrors = 0;
  for (const host of ['127.0.0.1', 'localhost']) {
    const pool = poolOn(t, `${host}:${up.port}`, { guard, tenant: 'acme', onConnectError: () => connectErrors++ });
    const r = await send(pool, '/').done;
    assert.equal(r.error?.name, 'UpstreamDeniedError', `${host}: ${String(r.error)}`);
    assert.equal(errorCode(r.error!), 'Svc.Data.UpstreamDenied');
  }
  assert.equal(connectErrors, 2, 'a refusal holds the target off like a refused connection');
  assert.equal(up.sessions.length, 0, 'nothing reached the upstream');
});

test('h2 over TLS: ALPN h2, the certificate checked against the cluster ca; an upstream that negotiates http/1.1, or an unknown CA, fails as TLS (502 UpstreamTls)', async (t) => {
  const ca = makeCa('h2 upstream CA');
  const cert = ca.issue('upstream', ['IP:127.0.0.1', 'DNS:localhost'], 'server');
  const alpn: string[] = [];
  const up = await h2Upstream(
    t,
    (stream, headers, session) => {
      alpn.push(String(session.alpnProtocol));
      stream.respond({ ':status': 200 });
      stream.end(`${headers[':scheme']} ${headers[':authority']}`);
    },
    { tls: cert },
  );
  const pool = poolOn(t, up.target, { tls: { ca: ca.cert, verify: true } });
  const ok = await send(pool, '/').done;
  assert.equal(ok.error, null, String(ok.error));
  assert.equal(ok.body.toString(), `https 127.0.0.1:${up.port}`);
  assert.deepEqual(alpn, ['h2']);

  // An HTTP/1.1-only TLS server: its ALPN answer is http/1.1.
  const h1only = createHttpsServer({ cert: cert.cert, key: cert.key, ALPNProtocols: ['http/1.1'] }, (_req, res) => res.end('h1'));
  await new Promise<void>((r) => h1only.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => h1only.close(r)));
  const logged: UpstreamTlsError[] = [];
  let connectErrors = 0;
  const h1Pool = poolOn(t, `https://127.0.0.1:${(h1only.address() as AddressInfo).port}`, { tls: { ca: ca.cert, verify: true }, onTlsFailure: (e) => logged.push(e), onConnectError: () => connectErrors++ });
  const refused = await send(h1Pool, '/').done;
  assert.equal(refused.error?.name, 'UpstreamTlsError', String(refused.error));
  assert.equal((refused.error as UpstreamTlsError).reason, 'ALPN_NOT_H2');
  assert.match(refused.error!.message, /http\/1\.1/);
  assert.deepEqual(refused.events, ['error']);
  assert.ok(connectFailed(refused.error!), 'a connect failure: failover, hold-off');
  assert.equal(failureKind(refused.error!), 'tls');
  assert.equal(errorCode(refused.error!), 'Svc.Data.UpstreamTls');
  assert.equal(connectErrors, 1);
  assert.equal(logged.length, 1, 'the workers\' TLS warn line is told');

  const stranger = poolOn(t, up.target, { tls: { ca: makeCa('another CA').cert, verify: true } });
  const unknown = await send(stranger, '/').done;
  assert.equal(unknown.error?.name, 'UpstreamTlsError');
  assert.equal((unknown.error as UpstreamTlsError).reason, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
});

