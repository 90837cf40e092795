import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLIENT, OtlpSpan, SERVER, serverAttributes } from '../../src/worker/observe/otlp-span.js';
import { ProtoWriter, varintSize } from '../../src/worker/observe/proto-writer.js';
import { sampledByRatio } from '../../src/worker/observe/tracer.js';
import { decodeSpans } from '../helpers/otlp-receiver.js';

/** Spans wrapped as one ExportTraceServiceRequest { resource_spans { scope_spans { spans } } }. */
function exportOf(...spans: OtlpSpan[]): Buffer {
  const w = new ProtoWriter(Buffer.alloc(spans.reduce((n, s) => n + s.maxBytes(), 64)));
  const rs = w.open(1);
  const ss = w.open(2);
  for (const s of spans) {
    assert.ok(w.pos + s.maxBytes() <= w.buf.length);
    const before = w.pos;
    s.writeTo(w, 2);
    assert.ok(w.pos - before <= s.maxBytes(), 'maxBytes bounds what is written');
  }
  w.close(ss);
  w.close(rs);
  return w.buf.subarray(0, w.pos);
}

test('epoch milliseconds become fixed64 nanoseconds, exact to what a double holds', () => {
  const nanosOf = (ms: number) => {
    const w = new ProtoWriter(Buffer.alloc(9));
    w.nanos(7, ms);
    assert.equal(w.buf[0], (7 << 3) | 1, 'field 7, wire type fixed64');
    return w.buf.readBigUInt64LE(1);
  };
  assert.equal(nanosOf(1_764_258_000_123), 1_764_258_000_123_000_000n);
  assert.equal(nanosOf(1_764_258_000_123.5), 1_764_258_000_123_500_000n);
  assert.equal(nanosOf(1_764_258_000_123 + 2 ** -10), 1_764_258_000_123_000_977n, 'a short fraction');
  assert.equal(nanosOf(41.999_999_9), 42_000_000n, 'a fraction that rounds up carries into the millisecond');
  assert.equal(nanosOf(4_294_967_296_001), 4_294_967_296_001_000_000n, 'a millisecond count past 32 bits');
});

test('varints: sizes and bytes at every length boundary', () => {
  for (const n of [0, 1, 127, 128, 16_383, 16_384, 2 ** 21 - 1, 2 ** 21, 2 ** 28, 2 ** 35 + 3]) {
    const w = new ProtoWriter(Buffer.alloc(10));
    w.varint(n);
    assert.equal(w.pos, varintSize(n), `size of ${n}`);
    let v = 0;
    for (let i = w.pos - 1; i >= 0; i--) v = v * 128 + (w.buf[i]! & 127);
    assert.equal(v, n);
  }
});

test('a span is a valid OTLP protobuf Span whatever its path or error text holds, at any length', () => {
  const hostile = '/a"b\\c\n{"x":1}\u2028é😀';
  const long = `/${'ü'.repeat(9_000)}`; // 18,001 UTF-8 bytes: a length of three varint bytes
  const span = new OtlpSpan('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', '', 'GET r', SERVER, 'vendor="q"');
  span.method = 'GET';
  span.path = hostile;
  span.serverAttributes = serverAttributes('shop.example', 8080.9);
  span.errorType = 'x"\n';
  span.failed = true;
  span.end();
  const big = new OtlpSpan('4bf92f3577b34da6a3ce929d0e0e4736', 'aaaaaaaaaaaaaaaa', '', 'GET big', SERVER, undefined);
  big.path = long;
  big.end();
  const child = new OtlpSpan('4bf92f3577b34da6a3ce929d0e0e4736', '1111111111111111', '00f067aa0ba902b7', 'GET', CLIENT, undefined).end();
  const [s, b, c] = decodeSpans(exportOf(span, big, child));
  assert.equal(s!.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.equal(s!.spanId, '00f067aa0ba902b7');
  assert.equal(s!.parentSpanId, '', 'a root span names no parent');
  assert.equal(s!.kind, SERVER);
  assert.equal(s!.name, 'GET r');
  assert.equal(s!.traceState, 'vendor="q"');
  assert.equal(s!.statusCode, 2);
  assert.deepEqual(s!.attributes, { 'http.request.method': 'GET', 'url.path': hostile, 'server.address': 'shop.example', 'server.port': 8080, 'error.type': 'x"\n' });
  assert.ok(s!.endTimeUnixNano >= s!.startTimeUnixNano);
  assert.ok(Number(s!.startTimeUnixNano / 1_000_000n) - Date.now() < 1_000, 'times are epoch nanoseconds');
  assert.equal(b!.attributes['url.path'], long);
  assert.equal(c!.parentSpanId, '00f067aa0ba902b7');
  assert.equal(c!.kind, CLIENT);
  assert.deepEqual(c!.attributes, {});
  assert.equal(c!.statusCode, 0);
});

test("a gRPC call's span: rpc.system, rpc.service, rpc.method and rpc.grpc.status_code beside the HTTP status, within maxBytes", () => {
  const grpc = (service: string, method: string, status: number) => {
    const span = new OtlpSpan('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', '', 'POST echo', SERVER, undefined);
    span.status = 200;
    span.rpc = true;
    span.rpcService = service;
    span.rpcMethod = method;
    span.grpcStatus = status;
    return span.end();
  };
  const plain = new OtlpSpan('4bf92f3577b34da6a3ce929d0e0e4736', 'bbbbbbbbbbbbbbbb', '', 'GET web', SERVER, undefined);
  plain.status = 200;
  const odd = `pkg.${'é'.repeat(300)}"\n`; // any text a path may hold, past a one-byte length
  const [ok, notFound, unknown, other] = decodeSpans(exportOf(grpc('switchyard.test.Echo', 'Unary', 0), grpc(odd, 'M/x', 5), grpc('', '', -1), plain.end()));
  assert.deepEqual(ok!.attributes, { 'http.response.status_code': 200, 'rpc.system': 'grpc', 'rpc.service': 'switchyard.test.Echo', 'rpc.method': 'Unary', 'rpc.grpc.status_code': 0 });
  assert.deepEqual(notFound!.attributes, { 'http.response.status_code': 200, 'rpc.system': 'grpc', 'rpc.service': odd, 'rpc.method': 'M/x', 'rpc.grpc.status_code': 5 });
  assert.deepEqual(unknown!.attributes, { 'http.response.status_code': 200, 'rpc.system': 'grpc' }, 'no service, method or status known: none written');
  assert.deepEqual(other!.attributes, { 'http.response.status_code': 200 }, 'any other request has no rpc.* attribute');
});

test('a new trace is sampled by ratio on its trace id: all at 1, none at 0, about the ratio between, the same answer for the same id', () => {
  // Ids whose sampled digits (16-24) spread evenly over 32 bits.
  const ids = Array.from({ length: 20_000 }, (_, i) => `${'a'.repeat(16)}${((i * 2_654_435_761) >>> 0).toString(16).padStart(8, '0')}${'f'.repeat(8)}`);
  assert.ok(ids.every((id) => sampledByRatio(id, 1)));
  assert.ok(ids.every((id) => !sampledByRatio(id, 0)));
  const share = ids.filter((id) => sampledByRatio(id, 0.25)).length / ids.length;
  assert.ok(Math.abs(share - 0.25) < 0.02, `share ${share}`);
  assert.equal(sampledByRatio(ids[7]!, 0.5), sampledByRatio(ids[7]!, 0.5));
});
