import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accessLineFormat, combinedTime, escapeLogValue, isoTime, type AccessLogSettings } from '../../src/worker/observe/access-line.js';
import { LineBuffer } from '../../src/worker/observe/line-buffer.js';
import type { RequestRecord } from '../../src/worker/observe/request-record.js';
import { parseQuery } from '../../src/shared/url-query.js';
import { ACCESS_LOG_FIELDS, REDACT_QUERY_DEFAULT } from '../../src/shared/gateway-config-observability.js';

const AT = Date.UTC(2026, 10, 27, 15, 52, 5, 123);

function record(over: Partial<RequestRecord> = {}): RequestRecord {
  const r = {
    startedAt: AT,
    durationMs: 12.3456789,
    requestId: 'req-1',
    tenant: 'acme',
    route: 'api',
    method: 'GET',
    path: '/v1/items',
    query: 'page=2&token=abc',
    status: 200,
    grpcStatus: null,
    bytesReceived: 0,
    bytesSent: 123,
    upstream: '127.0.0.1:9000',
    upstreamMs: 4.5,
    client: '203.0.113.7',
    userAgent: 'curl/8.0',
    referer: 'https://example.test/',
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    ...over,
  };
  return { queryPairs: parseQuery(r.query), ...r };
}

const settings = (over: Partial<AccessLogSettings> = {}): AccessLogSettings => ({
  format: 'json',
  sample: 1,
  fields: null,
  redactQuery: REDACT_QUERY_DEFAULT,
  ...over,
});

/** What `write` puts in a LineBuffer, as text. */
function written(write: (out: LineBuffer) => void): string {
  const parts: Buffer[] = [];
  const out = new LineBuffer(64, (b) => parts.push(b));
  write(out);
  out.hand();
  return Buffer.concat(parts).toString('utf8');
}

/** The line format of `s`, as a function returning text. */
const format = (s: AccessLogSettings) => {
  const line = accessLineFormat(s);
  return (r: RequestRecord) => written((out) => line(r, out));
};

/** The line parsed, after checking it is exactly one line. */
function parseLine(line: string): Record<string, unknown> {
  assert.ok(line.endsWith('\n'), 'a line ends with a newline');
  assert.equal(line.indexOf('\n'), line.length - 1, `one line: ${JSON.stringify(line)}`);
  assert.ok(!/[\r\u0085\u2028\u2029]/.test(line), 'no other line break either');
  return JSON.parse(line) as Record<string, unknown>;
}

test('a JSON line has every field, in ACCESS_LOG_FIELDS order, with the values of the record', () => {
  const line = format(settings())(record());
  const parsed = parseLine(line);
  assert.deepEqual(Object.keys(parsed), [...ACCESS_LOG_FIELDS]);
  assert.deepEqual(parsed, {
    time: '2026-11-27T15:52:05.123Z',
    requestId: 'req-1',
    tenant: 'acme',
    route: 'api',
    method: 'GET',
    path: '/v1/items?page=2&token=[redacted]',
    status: 200,
    grpcStatus: null,
    bytesReceived: 0,
    bytesSent: 123,
    durationMs: 12.346,
    upstream: '127.0.0.1:9000',
    upstreamMs: 4.5,
    client: '203.0.113.7',
    userAgent: 'curl/8.0',
    referer: 'https://example.test/',
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  });
});

test('a JSON line writes what is absent as null, and non-finite numbers as null (never NaN, which is not JSON)', () => {
  const parsed = parseLine(
    format(settings())(
      record({ requestId: '', tenant: '', route: '', query: null, upstream: null, upstreamMs: null, userAgent: undefined, referer: undefined, traceId: null, durationMs: NaN, status: 404 }),
    ),
  );
  assert.equal(parsed.path, '/v1/items');
  for (const f of ['requestId', 'tenant', 'route', 'upstream', 'upstreamMs', 'userAgent', 'referer', 'traceId', 'durationMs']) assert.equal(parsed[f], null, f);
  assert.equal(parsed.status, 404);
});

test('a gRPC call has its grpc-status beside its HTTP status 200, written as a number (0 included); any other request has null', () => {
  const line = format(settings());
  const call = (grpcStatus: number | null) => parseLine(line(record({ method: 'POST', path: '/switchyard.test.Echo/Unary', query: null, grpcStatus })));
  for (const n of [0, 5, 12, 16, 99]) {
    const parsed = call(n);
    assert.equal(parsed.status, 200);
    assert.equal(parsed.grpcStatus, n);
  }
  assert.equal(call(null).grpcStatus, null, 'a call whose client got no status');
  const keys = Object.keys(call(5));
  assert.equal(keys.indexOf('grpcStatus'), keys.indexOf('status') + 1, 'next to the HTTP status');
  assert.deepEqual(Object.keys(parseLine(format(settings({ fields: ['grpcStatus', 'path'] }))(record({ grpcStatus: 14 })))), ['path', 'grpcStatus']);
});

test('a combined line is nginx\'s combined whatever the grpc-status: no field of its own', () => {
  const line = format(settings({ format: 'combined' }));
  assert.equal(line(record({ grpcStatus: 5 })), line(record({ grpcStatus: null })));
});

test('`fields` keeps only those fields, still in ACCESS_LOG_FIELDS order', () => {
  const parsed = parseLine(format(settings({ fields: ['status', 'time', 'path'] }))(record()));
  assert.deepEqual(Object.keys(parsed), ['time', 'path', 'status']);
});

test('query values of redactQuery names are redacted: names case-insensitive and percent-decoded, separators and the rest as sent', () => {
  const line = format(settings({ redactQuery: ['access_token', 'sid'] }));
  const path = (query: string | null) => parseLine(line(record({ query }))).path;
  assert.equal(path('ACCESS_TOKEN=a&x=1;Sid=b'), '/v1/items?ACCESS_TOKEN=[redacted]&x=1;Sid=[redacted]');
  assert.equal(path('access%5Ftoken=a&%73id=b&token=c'), '/v1/items?access%5Ftoken=[redacted]&%73id=[redacted]&token=c');
  assert.equal(path('access_token&sid='), '/v1/items?access_token&sid=[redacted]');
  assert.equal(path(''), '/v1/items?', 'a bare ? is kept');
  assert.equal(parseLine(format(settings({ redactQuery: [] }))(record())).path, '/v1/items?page=2&token=abc', 'an empty list redacts nothing');
});

test('redactQuery names are judged as key-auth reads a query credential: every form it accepts as the key is redacted', () => {
  // Regression: only the exact decoded name was redacted, while key-auth on `api_key`
  // accepts each of these as the key, so they were logged in clear.
  const line = format(settings({ redactQuery: ['api_key'] }));
  const path = (query: string) => parseLine(line(record({ query }))).path;
  for (const name of ['api.key', 'api_key[]', '+api_key', 'api+key', 'API_KEY', 'api[key', 'api_key%00', 'api%u005Fkey']) {
    assert.equal(path(`${name}=SECRET&page=2`), `/v1/items?${name}=[redacted]&page=2`, name);
  }
  assert.equal(path('api=1&key=2&api_keys=3'), '/v1/items?api=1&key=2&api_keys=3', 'other names keep their values');
  const combined = format(settings({ redactQuery: ['api_key'], format: 'combined' }));
  assert.match(combined(record({ query: 'api.key=SECRET' })), /"GET \/v1\/items\?api\.key=\[redacted\] HTTP\/1\.1"/);
});

test('a hostile path, query, user agent or referer stays inside its JSON string: one line, valid JSON, the value intact', () => {
  const hostile = 'a"b\\c\nd\r\n{"status":200}\u0085\u2028\u0000é\ud800';
  const line = format(settings())(record({ path: `/x"\\\n`, query: 'q="\n"', userAgent: hostile, referer: hostile, method: 'GE"T' }));
  const parsed = parseLine(line);
  assert.equal(parsed.path, '/x"\\\n?q="\n"');
  assert.equal(parsed.userAgent, JSON.parse(JSON.stringify(hostile)));
  assert.equal(parsed.method, 'GE"T');
  assert.equal(parsed.status, 200);
});

test('a combined line is the Apache/nginx format: client, time, request line, status, bytes, referer, user agent', () => {
  const line = format(settings({ format: 'combined' }))(record());
  assert.equal(line, '203.0.113.7 - - [27/Nov/2026:15:52:05 +0000] "GET /v1/items?page=2&token=[redacted] HTTP/1.1" 200 123 "https://example.test/" "curl/8.0"\n');
  const bare = format(settings({ format: 'combined' }))(record({ referer: undefined, userAgent: '', client: '', query: null }));
  assert.equal(bare, '- - - [27/Nov/2026:15:52:05 +0000] "GET /v1/items HTTP/1.1" 200 123 "-" "-"\n');
  const untold = format(settings({ format: 'combined' }))(record({ path: '', query: null, status: 414 }));
  assert.match(untold, / "GET - HTTP\/1\.1" 414 /, 'a target not logged is `-`, never an empty field');
});

test('a combined line escapes quotes, backslashes, control and non-ASCII bytes as nginx does (\\xHH), so no client forges a line', () => {
  const COMBINED = /^(\S+) - - \[([^\]]+)\] "((?:[^"\\]|\\x[0-9A-F]{2})*)" (\d{3}) (\d+|-) "((?:[^"\\]|\\x[0-9A-F]{2})*)" "((?:[^"\\]|\\x[0-9A-F]{2})*)"\n$/;
  const forged = 'x" 200 1 "-" "-"\n127.0.0.1 - - [01/Jan/2026:00:00:00 +0000] "GET /admin HTTP/1.1" 200 1 "-" "\\';
  const line = format(settings({ format: 'combined' }))(record({ userAgent: forged, referer: 'é\t', path: '/p"q\\' }));
  const m = COMBINED.exec(line);
  assert.ok(m, `parses as one combined line: ${line}`);
  assert.equal(m[3], 'GET /p\\x22q\\x5C?page=2&token=[redacted] HTTP/1.1');
  assert.equal(m[6], '\\xC3\\xA9\\x09');
  assert.equal(m[7], 'x\\x22 200 1 \\x22-\\x22 \\x22-\\x22\\x0A127.0.0.1 - - [01/Jan/2026:00:00:00 +0000] \\x22GET /admin HTTP/1.1\\x22 200 1 \\x22-\\x22 \\x22\\x5C');
});

test('escapeLogValue leaves printable ASCII as is and the combined time is UTC in nginx form', () => {
  assert.equal(escapeLogValue('Mozilla/5.0 (X11; Linux) ~!'), 'Mozilla/5.0 (X11; Linux) ~!');
  assert.equal(escapeLogValue('\x7f"'), '\\x7F\\x22');
  assert.equal(combinedTime(Date.UTC(2026, 0, 3, 4, 5, 6)), '03/Jan/2026:04:05:06 +0000');
});

test('times and durations written from integers read as toISOString and String(Math.round(n * 1000) / 1000) would write them', () => {
  const time = isoTime();
  let at = Date.UTC(2026, 11, 31, 23, 59, 58, 990);
  for (let i = 0; i < 3000; i++, at += 0.7) assert.equal(written((out) => time(at, out)), `"${new Date(Math.floor(at)).toISOString()}"`, `at ${at}`);
  const ms = (n: number | null) => written((out) => out.ms(n));
  const samples = [0, 0.0004, 0.0005, 0.001, 0.01, 0.1, 0.5, 1, 4.5, 12.3456789, 999.9995, 1000, 65_535.25, 1_073_741.823, 1_073_741.824, 1e7 + 0.123, 2 ** 40];
  for (let i = 0; i < 5000; i++) samples.push(Math.random() * 10 ** Math.floor(Math.random() * 8));
  for (const n of samples) assert.equal(ms(n), String(Math.round(n * 1000) / 1000), `duration ${n}`);
  for (const n of [null, NaN, Infinity, -Infinity]) assert.equal(ms(n), 'null');
});
