import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Dispatcher } from 'undici';
import { GrpcWebResponse } from '../../src/worker/grpc/grpc-web-response.js';
import { decodeBase64Groups } from '../../src/worker/grpc/grpc-web-text-decoder.js';
import type { GrpcWebMode } from '../../src/worker/grpc/grpc-web-mode.js';

/** The handler that would write to the client: records what it is given; `taking` is what its onData answers. */
class Inner implements Dispatcher.DispatchHandler {
  status = 0;
  head: [string, string][] = [];
  body: Buffer[] = [];
  completed: unknown = 'not yet';
  taking = true;
  onConnect(): void {}
  onHeaders(status: number, raw: Buffer[]): boolean {
    this.status = status;
    for (let i = 0; i < raw.length; i += 2) this.head.push([raw[i]!.toString('latin1'), raw[i + 1]!.toString('latin1')]);
    return true;
  }
  onData(chunk: Buffer): boolean {
    this.body.push(Buffer.from(chunk));
    return this.taking;
  }
  onComplete(trailers: string[] | null): void {
    this.completed = trailers;
  }
  onError(): void {}
  header(name: string): string | undefined {
    return this.head.find(([k]) => k.toLowerCase() === name)?.[1];
  }
}

const raw = (...pairs: string[]) => pairs.map((s) => Buffer.from(s, 'latin1'));
const frame = (message: string) => Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), Buffer.from(message)]);
const grpcHead = raw('Content-Type', 'application/grpc+proto', 'Content-Length', '40', 'grpc-accept-encoding', 'identity', 'x-up', 'a');

/** `call`: the call's status as the gateway knows it (the upstream's, read before this handler sees the answer). */
function wrap(mode: GrpcWebMode, call: { status: number | null } = { status: null }) {
  const inner = new Inner();
  return { inner, call, h: new GrpcWebResponse(inner, mode, call) };
}

/** The body the client got, base64-decoded in text mode, split into [flag, payload] frames. */
function frames(inner: Inner, mode: GrpcWebMode): [number, string][] {
  let b: Buffer = Buffer.concat(inner.body);
  if (mode === 'text') b = decodeBase64Groups(b.toString('latin1'));
  const out: [number, string][] = [];
  for (let i = 0; i < b.length;) {
    const len = b.readUInt32BE(i + 1);
    out.push([b[i]!, b.subarray(i + 5, i + 5 + len).toString('latin1')]);
    i += 5 + len;
  }
  return out;
}

for (const mode of ['binary', 'text'] as const) {
  test(`${mode}: the head gets the gRPC-Web type and no length; messages then one trailer frame; no HTTP trailers`, () => {
    const { inner, h, call } = wrap(mode);
    assert.equal(h.onHeaders(200, grpcHead, () => {}, 'OK'), true);
    assert.equal(inner.status, 200);
    assert.deepEqual(inner.head, [['grpc-accept-encoding', 'identity'], ['x-up', 'a'], ['content-type', mode === 'text' ? 'application/grpc-web-text+proto' : 'application/grpc-web+proto']]);
    const m1 = frame('hello');
    const m2 = frame('world!!');
    // split a message across chunks, and two in one
    h.onData(m1.subarray(0, 4));
    h.onData(Buffer.concat([m1.subarray(4), m2.subarray(0, 1)]));
    h.onData(m2.subarray(1));
    h.onComplete(['grpc-status', '0', 'Grpc-Message', 'OK']);
    assert.equal(inner.completed, null);
    assert.equal(call.status, null, 'the upstream\'s status is read before this handler, not here');
    assert.deepEqual(frames(inner, mode), [[0, 'hello'], [0, 'world!!'], [0x80, 'grpc-status:0\r\ngrpc-message:OK\r\n']]);
    if (mode === 'text') for (const c of inner.body) assert.match(c.toString('latin1'), /^[A-Za-z0-9+/]*=*$/);
    else assert.deepEqual(Buffer.concat(inner.body).subarray(0, m1.length + m2.length), Buffer.concat([m1, m2]));
  });

  test(`${mode}: a trailers-only answer (grpc-status in the head) passes as it is, no trailer frame`, () => {
    const { inner, h } = wrap(mode);
    h.onHeaders(200, raw('content-type', 'application/grpc', 'grpc-status', '5', 'grpc-message', 'not%20found'), () => {}, 'OK');
    h.onComplete(null);
    assert.deepEqual(inner.head, [['grpc-status', '5'], ['grpc-message', 'not%20found'], ['content-type', `application/grpc-web${mode === 'text' ? '-text' : ''}+proto`]]);
    assert.deepEqual(inner.body, []);
    assert.equal(inner.completed, null);
  });

  test(`${mode}: the trailer frame goes out even while the client holds writes back; onData passes the backpressure on`, () => {
    const { inner, h } = wrap(mode);
    h.onHeaders(200, grpcHead, () => {}, 'OK');
    inner.taking = false;
    assert.equal(h.onData(frame('abc')), false, 'the inner handler\'s answer');
    h.onComplete(['grpc-status', '0']);
    assert.deepEqual(frames(inner, mode), [[0, 'abc'], [0x80, 'grpc-status:0\r\n']]);
  });

  test(`${mode}: an answer that is not gRPC becomes trailers-only with a mapped status, its body dropped`, () => {
    const wrapped = wrap(mode);
    const { inner, h } = wrapped;
    h.onHeaders(503, raw('Content-Type', 'text/html', 'Content-Length', '5', 'Content-Encoding', 'gzip', 'retry-after', '1'), () => {}, 'Service Unavailable');
    assert.equal(h.onData(Buffer.from('<h1>')), true);
    h.onComplete([]);
    assert.equal(inner.status, 503);
    assert.equal(inner.header('grpc-status'), '14');
    assert.equal(decodeURIComponent(inner.header('grpc-message')!), 'upstream answered HTTP 503');
    assert.equal(inner.header('content-encoding'), undefined);
    assert.equal(inner.header('retry-after'), '1');
    assert.deepEqual(inner.body, []);
    assert.equal(wrapped.call.status, 14, 'the status the client got is the call\'s (metrics, access log, trace)');

    const ok = wrap(mode);
    ok.h.onHeaders(200, raw('content-type', 'text/plain'), () => {}, 'OK');
    ok.h.onComplete(null);
    assert.equal(ok.inner.header('grpc-status'), '2');
    assert.equal(ok.call.status, 2);
  });

  test(`${mode}: a gRPC answer that ends with no status at all gets one (UNKNOWN)`, () => {
    const { inner, h, call } = wrap(mode);
    h.onHeaders(200, grpcHead, () => {}, 'OK');
    h.onData(frame('x'));
    h.onComplete(null);
    const last = frames(inner, mode).at(-1)!;
    assert.equal(last[0], 0x80);
    assert.match(last[1], /^grpc-status:2\r\ngrpc-message:[^\r]+\r\n$/);
    assert.equal(call.status, 2);
  });
}

test('text: a message complete in its chunk reaches the client before the next one comes', () => {
  const { inner, h } = wrap('text');
  h.onHeaders(200, grpcHead, () => {}, 'OK');
  h.onData(frame('one'));
  assert.deepEqual(frames(inner, 'text'), [[0, 'one']]);
  h.onData(frame('second'));
  assert.deepEqual(frames(inner, 'text'), [[0, 'one'], [0, 'second']]);
});

test('text: undici trailers as Buffers (its HTTP/1 parser) make the same frame', () => {
  const { inner, h } = wrap('text');
  h.onHeaders(200, grpcHead, () => {}, 'OK');
  h.onComplete([Buffer.from('grpc-status'), Buffer.from('0')] as unknown as string[]);
  assert.deepEqual(frames(inner, 'text'), [[0x80, 'grpc-status:0\r\n']]);
});
