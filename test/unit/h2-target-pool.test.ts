import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constants } from 'node:http2';
import { PassThrough, Readable } from 'node:stream';
import { errors, type Dispatcher } from 'undici';
import { H2TargetPool } from '../../src/worker/engine/upstream-h2/h2-target-pool.js';
import { targetConnection } from '../../src/shared/upstream-connect.js';
import { SESSION_WINDOW_BYTES, STREAM_WINDOW_BYTES } from '../../src/shared/upstream-h2-session.js';
import { UpstreamGuard } from '../../src/shared/upstream-guard.js';
import { connectionClosed, errorCode, failureKind, retriable } from '../../src/worker/upstream-failure.js';
import { h2Upstream, type H2Upstream } from '../helpers/h2-server.js';
import { headPairs, recordingHandler } from '../helpers/recording-handler.js';

/**
 * The HTTP/2 upstream pool's requests against real node:http2 servers (h2c here; TLS and
 * sessions in h2-target-pool-sessions.test.ts), through undici's handler protocol as the
 * proxy's handlers speak it.
 */

/** A pool on `up`, the policy deliberately open (loopback), closed after the test. */
function poolOn(t: { after(fn: () => unknown): void }, up: H2Upstream, o: { connections?: number; pingMs?: number } = {}): H2TargetPool {
  const connection = targetConnection(UpstreamGuard.allowAll(), 'default', up.target, { connectMs: 2_000, protocol: 'h2c' });
  const pool = new H2TargetPool({ target: up.target, connection, connections: o.connections ?? 4, idleMs: 4_000, connectMs: 2_000, pingMs: o.pingMs ?? 10_000 });
  t.after(() => pool.close());
  return pool;
}

const send = (pool: H2TargetPool, opts: Partial<Dispatcher.DispatchOptions>, h = recordingHandler()) => {
  pool.dispatch({ path: '/', method: 'GET', headersTimeout: 5_000, bodyTimeout: 5_000, ...opts } as Dispatcher.DispatchOptions, h.handler);
  return h;
};

/** An upstream that answers with what it saw: method, path, headers (pseudo ones too) and the body's bytes. */
async function mirror(t: { after(fn: () => unknown): void }) {
  return h2Upstream(t, (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      stream.respond({ ':status': 201, 'content-type': 'application/json', 'x-seen': 'yes' });
      stream.end(JSON.stringify({ headers, body: Buffer.concat(chunks).toString() }));
    });
  });
}

test('GET and POST: status, a head without pseudo-headers, the body; Host is :authority, connection-specific fields are not sent', async (t) => {
  const up = await mirror(t);
  const pool = poolOn(t, up);
  const get = await send(pool, {
    path: '/a?b=1',
    headers: ['host', 'api.example', 'connection', 'keep-alive', 'keep-alive', 'timeout=5', 'te', 'trailers', 'x-one', '1', 'X-Two', '2', 'x-one', 'again'],
  }).done;
  assert.equal(get.error, null);
  assert.deepEqual(get.events, ['connect', 'headers 201', 'data', 'complete']);
  const head = headPairs(get.raw);
  assert.ok(!head.some(([k]) => k.startsWith(':')), 'no pseudo-header in the raw head');
  assert.ok(head.some(([k, v]) => k === 'x-seen' && v === 'yes'));
  const seen = JSON.parse(get.body.toString()) as { headers: Record<string, string | string[]>; body: string };
  assert.equal(seen.headers[':method'], 'GET');
  assert.equal(seen.headers[':path'], '/a?b=1');
  assert.equal(seen.headers[':scheme'], 'http');
  assert.equal(seen.headers[':authority'], 'api.example');
  assert.equal(seen.headers.te, 'trailers');
  assert.equal(seen.headers['x-two'], '2');
  assert.equal(seen.headers['x-one'], '1, again', 'repeated fields arrive, in order');
  assert.equal(seen.headers.connection, undefined);
  assert.equal(seen.headers['keep-alive'], undefined);
  assert.equal(get.trailers, null, 'no trailers: onComplete(null)');

  // A te other than trailers is connection-specific too; no Host: the target is the authority.
  const post = await send(pool, { method: 'POST', path: '/p', headers: ['te', 'gzip', 'transfer-encoding', 'chunked'], body: Buffer.from('a buffer body') }).done;
  const p = JSON.parse(post.body.toString()) as { headers: Record<string, string>; body: string };
  assert.equal(p.body, 'a buffer body');
  assert.equal(p.headers[':authority'], up.target);
  assert.equal(p.headers.te, undefined);
  assert.equal(p.headers['transfer-encoding'], undefined);

  const streamed = await send(pool, { method: 'PUT', path: '/s', body: Readable.from([Buffer.from('one '), Buffer.from('two')]) }).done;
  assert.equal(JSON.parse(streamed.body.toString()).body, 'one two');
  assert.equal(up.sessions.length, 1, 'three requests, one HTTP/2 connection');
});

test('trailers reach onComplete as a flat list of lower-case names and values; a trailers-only answer is onHeaders then onComplete(null)', async (t) => {
  const up = await h2Upstream(t, (stream, headers) => {
    if (headers[':path'] === '/only') return stream.respond({ ':status': 200, 'grpc-status': '5', 'grpc-message': 'not found' }, { endStream: true });
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'Grpc-Status': '0', 'grpc-message': 'fine', 'x-extra': ['a', 'b'] }));
    stream.end(Buffer.from([0, 0, 0, 0, 0]));
  });
  const pool = poolOn(t, up);
  const withTrailers = await send(pool, { path: '/call' }).done;
  assert.deepEqual(withTrailers.events, ['connect', 'headers 200', 'data', 'complete']);
  assert.deepEqual(withTrailers.trailers, ['grpc-status', '0', 'grpc-message', 'fine', 'x-extra', 'a', 'x-extra', 'b']);
  assert.equal(withTrailers.body.length, 5);

  const only = await send(pool, { path: '/only' }).done;
  assert.deepEqual(only.events, ['connect', 'headers 200', 'complete']);
  assert.equal(only.trailers, null);
  assert.ok(headPairs(only.raw).some(([k, v]) => k === 'grpc-status' && v === '5'), 'the status is in the head');
});

test('full duplex: each chunk the upstream echoes reaches onData while the request body is still streaming', async (t) => {
  const up = await h2Upstream(t, (stream) => {
    stream.respond({ ':status': 200 });
    stream.on('data', (c: Buffer) => stream.write(c));
    stream.on('end', () => stream.end());
  });
  const pool = poolOn(t, up);
  const body = new PassThrough();
  const h = send(pool, { method: 'POST', path: '/bidi', body });
  for (const word of ['ping', 'pong', 'last']) {
    body.write(word);
    // The echo comes back before the next chunk is even written: the body has not ended.
    assert.equal((await h.nextData()).toString(), word);
    assert.equal(h.rec.trailers, undefined);
  }
  body.end();
  const r = await h.done;
  assert.equal(r.error, null);
  assert.equal(r.body.toString(), 'pingponglast');
});

test('backpressure: a handler that pauses stops the stream (the upstream stalls at the flow-control window) until resume', async (t) => {
  const total = 8 * STREAM_WINDOW_BYTES;
  let flushed = 0;
  const up = await h2Upstream(t, (stream) => {
    stream.respond({ ':status': 200 });
    const chunk = Buffer.alloc(16 * 1024, 120);
    const pump = (): void => {
      while (flushed < total) {
        flushed += chunk.length;
        if (!stream.write(chunk)) return void stream.once('drain', pump);
      }
      stream.end();
    };
    pump();
  });
  const pool = poolOn(t, up);
  let paused = false;
  const h = send(pool, { path: '/big', bodyTimeout: 0 }, recordingHandler({ pause: (what) => what === 'data' && !paused && (paused = true) }));
  await h.nextData();
  await new Promise((r) => setTimeout(r, 300));
  const stalledAt = flushed;
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(flushed, stalledAt, 'the upstream wrote nothing more while the handler was paused');
  // The stream's receive window (256 KiB, not node's default 64 KiB: the upstream got that
  // far unread), and what the upstream's own socket and stream buffers hold.
  assert.ok(stalledAt > (STREAM_WINDOW_BYTES * 3) / 4, `the upstream stalled after ${stalledAt} bytes: the stream's window is not ${STREAM_WINDOW_BYTES}`);
  assert.ok(stalledAt < STREAM_WINDOW_BYTES + 256 * 1024, `the upstream stalled after ${stalledAt} bytes, within the windows and buffers, far below ${total}`);
  h.resume();
  const r = await h.done;
  assert.equal(r.error, null);
  assert.equal(r.body.length, total);
});

test("the connection's receive window toward a target is raised past node's 64 KiB: the target may send that much on all its streams together", async (t) => {
  const up = await h2Upstream(t, (stream) => {
    stream.respond({ ':status': 200 });
    stream.end('ok');
  });
  const pool = poolOn(t, up);
  const r = await send(pool, { path: '/window' }).done;
  assert.equal(r.error, null);
  // The target's view of what it may still send on the connection (our window less the 2 bytes, or renewed).
  const canSend = up.sessions[0]!.state.remoteWindowSize ?? 0;
  assert.ok(canSend > SESSION_WINDOW_BYTES - 1024, `the target may send ${canSend} bytes on the connection, not ${SESSION_WINDOW_BYTES}`);
});

test('abort resets the stream with CANCEL: the upstream sees it closed with code 8, the handler gets onError with the abort\'s error', async (t) => {
  const up = await h2Upstream(t, (stream) => {
    stream.respond({ ':status': 200 });
    stream.write('first');
  });
  const pool = poolOn(t, up);
  const closed = up.closeOf('/hang');
  const h = send(pool, { path: '/hang' });
  await h.nextData();
  const why = new Error('client aborted');
  h.abort(why);
  const r = await h.done;
  assert.equal(r.error, why);
  assert.deepEqual(r.events, ['connect', 'headers 200', 'data', 'error']);
  assert.equal((await closed).rstCode, constants.NGHTTP2_CANCEL);
  assert.equal(pool.busy, 0, 'the stream slot is free');
});

test('headers and body deadlines: undici\'s typed errors (504 envelopes), the stream reset with CANCEL', async (t) => {
  const up = await h2Upstream(t, (stream, headers) => {
    if (headers[':path'] === '/slow-body') {
      stream.respond({ ':status': 200 });
      stream.write('some');
    }
    // /silent: never answers
  });
  const pool = poolOn(t, up);
  const silentClosed = up.closeOf('/silent');
  const started = performance.now();
  const silent = await send(pool, { path: '/silent', headersTimeout: 150 }).done;
  assert.ok(silent.error instanceof errors.HeadersTimeoutError, String(silent.error));
  assert.ok(performance.now() - started >= 140);
  assert.equal(errorCode(silent.error), 'Svc.Data.UpstreamTimeout');
  assert.equal((await silentClosed).rstCode, constants.NGHTTP2_CANCEL);

  const slow = await send(pool, { path: '/slow-body', bodyTimeout: 150 }).done;
  assert.ok(slow.error instanceof errors.BodyTimeoutError, String(slow.error));
  assert.deepEqual(slow.events, ['connect', 'headers 200', 'data', 'error']);
});

test('a stream the upstream resets fails with a reset: retriable, 502, kind reset; a connection cut under the answer is a closed connection', async (t) => {
  const up = await h2Upstream(t, (stream, headers, session) => {
    if (headers[':path'] === '/refused') return stream.close(constants.NGHTTP2_REFUSED_STREAM);
    stream.respond({ ':status': 200 });
    stream.write('partial');
    if (headers[':path'] === '/reset') setTimeout(() => stream.destroy(new Error('upstream trouble')), 20);
    else setTimeout(() => session.destroy(), 20);
  });
  const pool = poolOn(t, up);
  const refused = (await send(pool, { path: '/refused' }).done).error!;
  assert.equal(refused.name, 'H2StreamResetError');
  assert.match(refused.message, /REFUSED_STREAM/);
  assert.ok(connectionClosed(refused) && retriable(refused));
  assert.equal(failureKind(refused), 'reset');
  assert.equal(errorCode(refused), 'Svc.Data.UpstreamUnreachable');

  const reset = await send(pool, { path: '/reset' }).done;
  assert.deepEqual(reset.events, ['connect', 'headers 200', 'data', 'error'], 'the cut answer never completes');
  assert.match(reset.error!.message, /INTERNAL_ERROR/);

  const cut = await send(pool, { path: '/cut' }).done;
  assert.deepEqual(cut.events, ['connect', 'headers 200', 'data', 'error']);
  assert.ok(connectionClosed(cut.error!), String(cut.error));
});

test('a request body that fails (a data-port limit) fails the request with its error and resets the stream', async (t) => {
  const up = await h2Upstream(t, (stream) => stream.on('data', () => {}));
  const pool = poolOn(t, up);
  const body = new PassThrough();
  const closed = up.closeOf('/upload');
  const h = send(pool, { method: 'POST', path: '/upload', body });
  body.write('some bytes');
  const refused = new Error('the request body is over limits.maxBodyBytes');
  setTimeout(() => body.destroy(refused), 30);
  const r = await h.done;
  assert.equal(r.error, refused);
  assert.equal((await closed).rstCode, constants.NGHTTP2_CANCEL);
});

test('header bytes HTTP/2 cannot carry are refused before sending (400, as undici refuses them)', async (t) => {
  const up = await mirror(t);
  const pool = poolOn(t, up);
  for (const headers of [['x-bad', 'a\r\nb'], ['x-del', 'a\x7fb'], ['bad name', 'x']]) {
    const r = await send(pool, { headers }).done;
    assert.ok(r.error instanceof errors.InvalidArgumentError, String(r.error));
    assert.deepEqual(r.events, ['error'], 'refused before onConnect, as undici does');
    assert.equal(errorCode(r.error), 'Svc.Data.BadRequest');
  }
  assert.equal(pool.busy, 0);
  const ok = await send(pool, {}).done;
  assert.equal(ok.status, 201, 'the session still serves');
});

test("a handler of undici's newer interface (mirror's copies) is served too: onRequestStart, onResponseStart with parsed headers, data, onResponseEnd with trailers", async (t) => {
  const up = await h2Upstream(t, (stream) => {
    stream.respond({ ':status': 202, 'x-a': '1' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'x-t': 'done' }));
    stream.end('copy');
  });
  const pool = poolOn(t, up);
  const seen: string[] = [];
  await new Promise<void>((resolve) => {
    pool.dispatch({ path: '/m', method: 'GET', headersTimeout: 5_000, bodyTimeout: 5_000 }, {
      onRequestStart: () => seen.push('start'),
      onResponseStart: (_c: unknown, status: number, headers: Record<string, string>) => seen.push(`head ${status} ${headers['x-a']}`),
      onResponseData: (_c: unknown, chunk: Buffer) => seen.push(`data ${chunk.toString()}`),
      onResponseEnd: (_c: unknown, trailers: Record<string, string>) => {
        seen.push(`end ${trailers['x-t']}`);
        resolve();
      },
      onResponseError: (_c: unknown, err: Error) => {
        seen.push(`error ${err.message}`);
        resolve();
      },
    } as unknown as Dispatcher.DispatchHandler);
  });
  assert.deepEqual(seen, ['start', 'head 202 1', 'data copy', 'end done']);
});

test('a handler that throws in onHeaders or onData fails its request with that error and resets the stream, as undici does; the session serves on', async (t) => {
  const up = await h2Upstream(t, (stream) => {
    stream.respond({ ':status': 200 });
    stream.write('chunk');
  });
  const pool = poolOn(t, up);
  for (const where of ['headers', 'data'] as const) {
    const boom = new Error(`handler bug in ${where}`);
    const closed = up.closeOf(`/${where}`);
    const h = recordingHandler({
      pause: (what) => {
        if (what === where) throw boom;
        return false;
      },
    });
    send(pool, { path: `/${where}` }, h);
    assert.equal((await h.done).error, boom);
    assert.equal((await closed).rstCode, constants.NGHTTP2_CANCEL);
  }
  assert.equal(up.sessions.length, 1);
});
