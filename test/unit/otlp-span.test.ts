import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLIENT, nanos, OtlpSpan, SERVER } from '../../src/worker/observe/otlp-span.js';
import { sampledByRatio } from '../../src/worker/observe/tracer.js';

test('epoch milliseconds become OTLP nanoseconds, the sub-millisecond part padded to 6 digits and never 7', () => {
  assert.equal(nanos(1_764_258_000_123), '1764258000123000000');
  assert.equal(nanos(1_764_258_000_123.5), '1764258000123500000');
  assert.equal(nanos(1_764_258_000_123 + 2 ** -10), '1764258000123000977', 'a short fraction keeps its leading zeros');
  assert.equal(nanos(41.999_999_9), '42000000', 'a fraction that rounds up carries into the millisecond');
  assert.match(nanos(Date.now() + Math.random()), /^\d{19}$/);
});

test('a span is one valid OTLP/JSON object whatever its path or error text holds; checked values are written as they are', () => {
  const hostile = '/a"b\\c\n{"x":1}\u2028';
  const span = new OtlpSpan('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', '', 'GET r', SERVER, 'vendor="q"')
    .safe('http.request.method', 'GET')
    .str('url.path', hostile)
    .int('server.port', 8080.9)
    .failed();
  const json = JSON.parse(span.end()) as Record<string, unknown> & { attributes: { key: string; value: Record<string, unknown> }[] };
  assert.equal(json.parentSpanId, undefined, 'a root span names no parent');
  assert.equal(json.kind, SERVER);
  assert.equal(json.traceState, 'vendor="q"');
  assert.deepEqual(json.status, { code: 2 });
  assert.deepEqual(
    json.attributes.map((a) => [a.key, Object.values(a.value)[0]]),
    [
      ['http.request.method', 'GET'],
      ['url.path', hostile],
      ['server.port', 8080],
    ],
  );
  assert.ok(BigInt(json.endTimeUnixNano as string) >= BigInt(json.startTimeUnixNano as string));
  const child = JSON.parse(new OtlpSpan('4bf92f3577b34da6a3ce929d0e0e4736', '1111111111111111', '00f067aa0ba902b7', 'GET', CLIENT, undefined).end()) as Record<string, unknown>;
  assert.equal(child.parentSpanId, '00f067aa0ba902b7');
  assert.deepEqual(child.attributes, []);
  assert.equal(child.status, undefined);
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
