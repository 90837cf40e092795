import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import assert from 'node:assert/strict';
import { tracingFor, type TracingSettings } from '../../src/worker/observe/tracer.js';
import type { TracedRequest } from '../../src/worker/observe/request-trace.js';
import { parseTraceparent } from '../../src/worker/observe/traceparent.js';
import { CLIENT, SERVER, startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { GrpcCall } from '../../src/worker/grpc/grpc-call.js';
import { freePort } from '../helpers/ports.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

function req(headers: Record<string, string> = {}): TracedRequest {
  return {
    method: 'GET',
    path: '/orders/7',
    scheme: 'http',
    clientAddress: '10.1.2.3',
    meter: { tenant: 'default', route: 'orders', spans: null },
    grpc: null,
    header: (n) => ({ host: 'shop.example:8080', ...headers })[n],
  };
}

function settings(endpoint: string, extra: Partial<TracingSettings> = {}): TracingSettings {
  return { endpoint, sampleRatio: 1, headersEnv: {}, serviceName: 'gw-test', ...extra };
}

const quiet = { warn: () => {} };

test('a sampled request: a SERVER span, a CLIENT child per call whose traceparent names it, exported with the service name and the configured headers', async (t) => {
  const rx = await startOtlpReceiver(t);
  const tracing = tracingFor(settings(rx.url, { headersEnv: { 'x-collector-token': 'SY_TEST_OTLP_TOKEN' } }), quiet, { SY_TEST_OTLP_TOKEN: 'tok-1' });
  const tr = tracing.start(req());
  assert.equal(tr.recording, true);
  assert.equal(tr.fresh, true);
  const call = tr.call('GET', 'http://127.0.0.1:9001');
  const sent = parseTraceparent(call.traceparent)!;
  assert.equal(sent.traceId, tr.traceId);
  assert.equal(sent.sampled, true);
  call.end(200);
  const failed = tr.call('POST', 'http://auth.example/verify');
  failed.fail('ECONNREFUSED');
  tr.end(201, 'req-1');
  await tracing.flush(5_000);
  const spans = await rx.waitForSpans('three spans', (s) => s.length >= 3);
  const server = spans.find((s) => s.kind === SERVER)!;
  const [client, other] = spans.filter((s) => s.kind === CLIENT);
  assert.equal(server.traceId, tr.traceId);
  assert.equal(server.parentSpanId, '');
  assert.equal(server.name, 'GET orders');
  assert.deepEqual(server.attributes, {
    'http.request.method': 'GET',
    'url.path': '/orders/7',
    'url.scheme': 'http',
    'client.address': '10.1.2.3',
    'server.address': 'shop.example',
    'server.port': 8080,
    'http.route': 'orders',
    'switchyard.tenant': 'default',
    'switchyard.route': 'orders',
    'switchyard.request_id': 'req-1',
    'http.response.status_code': 201,
  });
  assert.equal(server.resource['service.name'], 'gw-test');
  assert.equal(client!.parentSpanId, server.spanId);
  assert.equal(client!.spanId, sent.spanId);
  assert.equal(client!.traceId, tr.traceId);
  assert.deepEqual(client!.attributes, { 'http.request.method': 'GET', 'server.address': '127.0.0.1', 'server.port': 9001, 'http.response.status_code': 200 });
  assert.equal(other!.attributes['error.type'], 'ECONNREFUSED');
  assert.equal(other!.statusCode, 2);
  assert.equal(rx.exports[0]!['x-collector-token'], 'tok-1');
  assert.equal(rx.exports[0]!['content-type'], 'application/x-protobuf');
});

test('an incoming sampled traceparent is continued (its span is the parent, its tracestate kept); an unsampled one is passed on without spans', async (t) => {
  const rx = await startOtlpReceiver(t);
  const tracing = tracingFor(settings(rx.url), quiet);
  const tr = tracing.start(req({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'vendor=a1' }));
  assert.equal(tr.traceId, TRACE);
  assert.equal(tr.fresh, false);
  tr.call('GET', '127.0.0.1:9').end(503);
  tr.end(503, '');

  const unsampled = `00-${TRACE}-${SPAN}-00`;
  const off = tracing.start(req({ traceparent: unsampled }));
  assert.equal(off.recording, false);
  assert.equal(off.replaced, null, 'the client traceparent goes on unchanged');
  assert.equal(off.call('GET', 'x:1').traceparent, unsampled);
  off.end(200, '');
  await tracing.flush(5_000);
  const spans = await rx.waitForSpans('two spans', (s) => s.length >= 2);
  const server = spans.find((s) => s.kind === SERVER)!;
  assert.equal(server.parentSpanId, SPAN);
  assert.equal(server.traceId, TRACE);
  assert.equal(server.traceState, 'vendor=a1');
  assert.equal(server.statusCode, 2, 'a 5xx answer is a server error');
  const client = spans.find((s) => s.kind === CLIENT)!;
  assert.equal(client.parentSpanId, server.spanId);
  assert.equal(client.attributes['error.type'], '503');
  assert.equal(spans.length, 2, 'nothing of the unsampled request');
});

test("a gRPC call's SERVER span: rpc.* from its path and the status its client got; server-side codes make the span an error", async (t) => {
  const rx = await startOtlpReceiver(t);
  const tracing = tracingFor(settings(rx.url), quiet);
  const call = (path: string, grpcStatus: number | null) => {
    const tr = tracing.start({ ...req(), method: 'POST', path, grpc: new GrpcCall('application/grpc', true) });
    tr.end(200, '', grpcStatus);
    return tr.traceId;
  };
  const ids = [call('/switchyard.test.Echo/Unary', 0), call('/switchyard.test.Echo/Unary', 5), call('/pkg.Svc/Gone', 14), call('/pkg.Svc/Left', null), call('/noslash', 12)];
  const plain = tracing.start(req());
  plain.end(200, '', null);
  await tracing.flush(5_000);
  const spans = await rx.waitForSpans('six spans', (s) => s.length >= 6);
  const [ok, notFound, unavailable, left, bare] = ids.map((id) => spans.find((s) => s.traceId === id)!);
  const rpc = (s: ReceivedSpan) => Object.fromEntries(Object.entries(s.attributes).filter(([k]) => k.startsWith('rpc.') || k === 'http.response.status_code'));
  assert.deepEqual(rpc(ok!), { 'http.response.status_code': 200, 'rpc.system': 'grpc', 'rpc.service': 'switchyard.test.Echo', 'rpc.method': 'Unary', 'rpc.grpc.status_code': 0 });
  assert.equal(ok!.statusCode, 0);
  assert.equal(notFound!.attributes['rpc.grpc.status_code'], 5);
  assert.equal(notFound!.statusCode, 0, "NOT_FOUND is the client's, not the server's error");
  assert.equal(unavailable!.attributes['rpc.grpc.status_code'], 14);
  assert.equal(unavailable!.statusCode, 2, 'UNAVAILABLE is an error of the server side');
  assert.equal(unavailable!.attributes['error.type'], undefined, 'error.type stays for HTTP failures');
  assert.deepEqual(rpc(left!), { 'http.response.status_code': 200, 'rpc.system': 'grpc', 'rpc.service': 'pkg.Svc', 'rpc.method': 'Left' }, 'no status reached the client');
  assert.deepEqual(rpc(bare!), { 'http.response.status_code': 200, 'rpc.system': 'grpc', 'rpc.grpc.status_code': 12 }, 'a path that names no method');
  assert.equal(bare!.statusCode, 2);
  assert.deepEqual(rpc(spans.find((s) => s.traceId === plain.traceId)!), { 'http.response.status_code': 200 }, 'a request that is no gRPC call');
});

test('sampleRatio 0: new traces are propagated (flags 00), not recorded', async (t) => {
  const rx = await startOtlpReceiver(t);
  const tracing = tracingFor(settings(rx.url, { sampleRatio: 0 }), quiet);
  for (let i = 0; i < 20; i++) {
    const tr = tracing.start(req());
    assert.equal(tr.recording, false);
    assert.match(tr.replaced!, /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    tr.end(200, '');
  }
  // An incoming sampled flag is still followed.
  const followed = tracing.start(req({ traceparent: `00-${TRACE}-${SPAN}-01` }));
  assert.equal(followed.recording, true);
  followed.end(200, '');
  await tracing.flush(5_000);
  await rx.waitForSpans('one span', (s) => s.length >= 1);
  assert.equal(rx.spans.length, 1);
});

test('a collector that refuses or hangs: flush returns within its bound, failures warn at most once a minute', async (t) => {
  const warnings: string[] = [];
  const log = { warn: (_o: object, msg: string) => void warnings.push(msg) };
  const refused = tracingFor(settings(`http://127.0.0.1:${await freePort()}/v1/traces`), log);
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 5; i++) refused.start(req()).end(200, '');
    await refused.flush(2_000);
  }
  assert.equal(warnings.length, 1, warnings.join('\n'));

  const rx = await startOtlpReceiver(t);
  rx.mode = 'hang';
  const hanging = tracingFor(settings(rx.url), log);
  hanging.start(req()).end(200, '');
  const t0 = Date.now();
  await hanging.flush(300);
  assert.ok(Date.now() - t0 < 2_000, 'flush is bounded');
});

test('batches: a span larger than a batch buffer gets one of its own, and every span of 900 traced requests arrives intact', async (t) => {
  const rx = await startOtlpReceiver(t);
  const tracing = tracingFor(settings(rx.url), quiet);
  const huge = `/${'é'.repeat(200_000)}`; // 400 KB of UTF-8, more than a batch buffer
  // 1,800 spans at once: within the export queue (2,048), which drops what is past it.
  for (let i = 0; i < 900; i++) {
    const tr = tracing.start(i === 450 ? { ...req(), path: huge } : { ...req(), path: `/orders/${i}` });
    tr.call('GET', '127.0.0.1:9').end(200);
    tr.end(200, `req-${i}`);
  }
  await tracing.flush(5_000);
  const spans = await rx.waitForSpans('1,800 spans', (s) => s.length >= 1_800);
  assert.equal(spans.length, 1_800);
  const servers = spans.filter((s) => s.kind === SERVER);
  assert.deepEqual(
    servers.map((s) => s.attributes['switchyard.request_id']).sort(),
    Array.from({ length: 900 }, (_, i) => `req-${i}`).sort(),
  );
  assert.equal(servers.find((s) => s.attributes['switchyard.request_id'] === 'req-450')!.attributes['url.path'], huge);
  assert.ok(rx.exports.length >= 4, `${rx.exports.length} exports: 1,800 spans go in batches of at most 512`);
});

test('spans ended in one turn are encoded after it and count against the export queue before that: 1,100 traced requests in one turn export 2,048 spans, and the rest are dropped with a warning', async (t) => {
  const rx = await startOtlpReceiver(t);
  const warnings: string[] = [];
  const tracing = tracingFor(settings(rx.url), { warn: (o: object) => void warnings.push((o as { detail: string }).detail) });
  for (let i = 0; i < 1_100; i++) {
    const tr = tracing.start(req());
    tr.call('GET', '127.0.0.1:9').end(200);
    tr.end(200, `req-${i}`);
  }
  await tracing.flush(5_000);
  const spans = await rx.waitForSpans('2,048 spans', (s) => s.length >= 2_048);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(rx.spans.length, 2_048);
  assert.ok(
    warnings.some((w) => w.includes('152 spans dropped')),
    warnings.join('\n'),
  );
  assert.equal(spans.filter((s) => s.kind === SERVER).length, 1_024);
});

test('ids written from the random pool are the ids sent upstream, for spans ended after their pool was used up and refilled', async (t) => {
  const rx = await startOtlpReceiver(t);
  const tracing = tracingFor(settings(rx.url), quiet);
  // 400 traces open at once (64 hex digits each, a pool holds 8,192): the last ends several refills after the first began.
  const open = Array.from({ length: 400 }, (_, i) => {
    const tr = tracing.start({ ...req(), path: `/ids/${i}` });
    const call = tr.call('GET', '127.0.0.1:9');
    return { tr, call, sent: parseTraceparent(call.traceparent)!, i };
  });
  for (const o of open.reverse()) {
    o.call.end(200);
    o.tr.end(200, `ids-${o.i}`);
  }
  await tracing.flush(5_000);
  const spans = await rx.waitForSpans('800 spans', (s) => s.length >= 800);
  for (const o of open) {
    const server = spans.find((s) => s.kind === SERVER && s.attributes['switchyard.request_id'] === `ids-${o.i}`)!;
    const client = spans.find((s) => s.kind === CLIENT && s.spanId === o.sent.spanId);
    assert.ok(client, `the call's span is the one its traceparent names (request ${o.i})`);
    assert.equal(server.traceId, o.tr.traceId);
    assert.equal(client.traceId, o.tr.traceId);
    assert.equal(o.sent.traceId, o.tr.traceId);
    assert.equal(client.parentSpanId, server.spanId, `the call's parent is its request's span (request ${o.i})`);
  }
  assert.equal(new Set(spans.map((s) => s.spanId)).size, 800, 'every span id differs');
});

test('a trace does not hold its request: what keeps a trace keeps none of the request', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const tracing = tracingFor(settings(`http://127.0.0.1:${await freePort()}/v1/traces`), quiet);
  let request: TracedRequest | null = req();
  const gone = new WeakRef(request);
  const trace = tracing.start(request);
  trace.call('GET', '127.0.0.1:9');
  request = null;
  await new Promise((r) => setImmediate(r));
  gc();
  assert.equal(gone.deref(), undefined, 'the request was collected while its trace is still held');
  trace.end(200, '');
});

test('a recorded trace, its calls and their spans hold no array: V8 may pretenure a growing array literal, and each one kept the values of its request alive past young collections', async () => {
  const tracing = tracingFor(settings(`http://127.0.0.1:${await freePort()}/v1/traces`), quiet);
  const trace = tracing.start(req());
  const call = trace.call('GET', '127.0.0.1:9');
  const objects: object[] = [trace, call];
  for (const o of [trace, call]) for (const v of Object.values(o)) if (v !== null && typeof v === 'object' && !(v instanceof Buffer)) objects.push(v as object);
  assert.ok(objects.length >= 4, 'the trace, the call and their spans');
  for (const o of objects) {
    const arrays = Object.entries(o).filter(([, v]) => Array.isArray(v));
    assert.deepEqual(arrays, [], `${o.constructor.name} holds no array`);
  }
  call.end(200);
  trace.end(200, '');
});
