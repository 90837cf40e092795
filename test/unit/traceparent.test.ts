import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTraceparent, parseTraceparent, TraceIds, validTraceparent } from '../../src/worker/observe/traceparent.js';
import { PropagationOnly } from '../../src/worker/observe/request-trace.js';
import { serverAddress } from '../../src/worker/observe/recorded-trace.js';
import { upstreamHeaders } from '../../src/worker/upstream-request-headers.js';
import type { StepRequest } from '../../src/steps/step.js';
import type { TracedRequest } from '../../src/worker/observe/request-trace.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const VALID = `00-${TRACE}-${SPAN}-01`;

/** The parsed fields, whatever object carries them. */
const read = (value: string) => ({ ...parseTraceparent(value)! });

test('a valid traceparent is read: ids, the sampled flag (bit 0 of the flags)', () => {
  assert.deepEqual(read(VALID), { traceId: TRACE, spanId: SPAN, sampled: true });
  assert.deepEqual(read(`00-${TRACE}-${SPAN}-00`), { traceId: TRACE, spanId: SPAN, sampled: false });
  assert.equal(parseTraceparent(`00-${TRACE}-${SPAN}-03`)!.sampled, true);
  assert.equal(parseTraceparent(`00-${TRACE}-${SPAN}-02`)!.sampled, false);
  // A later version is read by the 00 layout; what it adds after a dash is ignored.
  assert.deepEqual(read(`01-${TRACE}-${SPAN}-01`), { traceId: TRACE, spanId: SPAN, sampled: true });
  assert.deepEqual(read(`cc-${TRACE}-${SPAN}-01-what-comes-next`), { traceId: TRACE, spanId: SPAN, sampled: true });
});

test('invalid traceparents are refused (a new trace is started instead)', () => {
  const bad: [string, string][] = [
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version not hex', `0g-${TRACE}-${SPAN}-01`],
    ['version upper case', `0A-${TRACE}-${SPAN}-01`],
    ['version 00 with more after the flags', `00-${TRACE}-${SPAN}-01-extra`],
    ['a later version followed by no dash', `01-${TRACE}-${SPAN}-01x`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['upper-case trace id', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['upper-case span id', `00-${TRACE}-${SPAN.toUpperCase()}-01`],
    ['upper-case flags', `00-${TRACE}-${SPAN}-0A`],
    ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['long trace id', `00-${TRACE}0-${SPAN}-01`],
    ['short span id', `00-${TRACE}-${SPAN.slice(1)}-01`],
    ['long span id', `00-${TRACE}-${SPAN}0-01`],
    ['one-digit flags', `00-${TRACE}-${SPAN}-1`],
    ['three-digit flags', `00-${TRACE}-${SPAN}-001`],
    ['a non-hex digit in the trace id', `00-${TRACE.slice(0, 31)}z-${SPAN}-01`],
    ['underscores for dashes', `00_${TRACE}_${SPAN}_01`],
    ['surrounding space', ` ${VALID}`],
    ['empty', ''],
  ];
  for (const [what, value] of bad) {
    assert.equal(validTraceparent(value), false, what);
    assert.equal(parseTraceparent(value), null, what);
  }
  assert.equal(parseTraceparent(undefined), null);
});

test('format gives version 00 with the sampled flag', () => {
  assert.equal(formatTraceparent(TRACE, SPAN, true), VALID);
  assert.equal(formatTraceparent(TRACE, SPAN, false), `00-${TRACE}-${SPAN}-00`);
});

test('generated ids are lower-case hex of the right length, valid, and differ, across pool refills', () => {
  const ids = new TraceIds(64); // a small pool: refilled every few ids
  const seen = new Set<string>();
  for (let i = 0; i < 500; i++) {
    const tp = ids.newTraceparent();
    assert.match(tp, /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    assert.equal(validTraceparent(tp), true);
    assert.match(ids.traceId(), /^[0-9a-f]{32}$/);
    assert.match(ids.spanId(), /^[0-9a-f]{16}$/);
    seen.add(tp.slice(3, 35));
  }
  assert.equal(seen.size, 500);
});

function request(headers: string[]): StepRequest & TracedRequest {
  const find = (n: string) => {
    for (let i = 0; i < headers.length; i += 2) if (headers[i] === n) return headers[i + 1];
    return undefined;
  };
  return { method: 'GET', path: '/p', query: null, headers, remoteAddress: '10.0.0.1', clientAddress: '10.0.0.1', localPort: '8080', scheme: 'http', requestId: '', requestIdHeader: null, meter: null, header: find, headerList: find } as unknown as StepRequest & TracedRequest;
}

test('propagation only: a valid incoming traceparent goes on unchanged (tracestate too); else a new one replaces it and the tracestate', () => {
  const tracing = new PropagationOnly();
  const kept = request(['host', 'a', 'traceparent', VALID, 'tracestate', 'v=1']);
  const t1 = tracing.start(kept);
  assert.equal(t1.traceId, TRACE);
  assert.equal(t1.recording, false);
  assert.equal(t1.call('GET', 'x:1').traceparent, VALID);
  const h1 = upstreamHeaders(kept, null, t1);
  assert.deepEqual([h1[2], h1[3], h1[4], h1[5]], ['traceparent', VALID, 'tracestate', 'v=1'], 'unchanged, in place');

  for (const incoming of [null, `00-${TRACE.toUpperCase()}-${SPAN}-01`]) {
    const req = request(incoming === null ? ['host', 'a', 'tracestate', 'v=1'] : ['host', 'a', 'traceparent', incoming, 'tracestate', 'v=1']);
    const t = tracing.start(req);
    const h = upstreamHeaders(req, null, t);
    const tp = h.at(-1)!;
    assert.equal(h.at(-2), 'traceparent');
    assert.match(tp, /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    assert.equal(tp.slice(3, 35), t.traceId);
    assert.equal(h.filter((x) => x === 'traceparent').length, 1);
    assert.equal(h.includes('tracestate'), false, 'a new trace drops the old state');
    assert.equal(t.call('GET', 'x:1').traceparent, tp, 'service calls carry the same context');
  }
  // A step's own traceparent does not go next to the gateway's.
  const req = request(['host', 'a']);
  const t = tracing.start(req);
  const h = upstreamHeaders(req, { drop: [], tail: ['traceparent', VALID, 'x-a', '1'] }, t);
  assert.deepEqual(h.slice(-4), ['x-a', '1', 'traceparent', t.replaced]);
});

test('server.address and server.port of call targets and service URLs', () => {
  assert.deepEqual(serverAddress('127.0.0.1:8080'), ['127.0.0.1', 8080]);
  assert.deepEqual(serverAddress('http://up.example:81'), ['up.example', 81]);
  assert.deepEqual(serverAddress('https://up.example'), ['up.example', 443]);
  assert.deepEqual(serverAddress('http://auth.example/verify?x=1'), ['auth.example', 80]);
  assert.deepEqual(serverAddress('https://[::1]:9443/p'), ['::1', 9443]);
  assert.deepEqual(serverAddress('[::1]'), ['::1', 80]);
});
