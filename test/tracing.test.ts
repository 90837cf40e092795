import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { freePort } from './helpers/ports.js';
import { KeepAliveClient } from './helpers/keep-alive-client.js';
import { CLIENT, SERVER, startOtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const NEW_UNSAMPLED = /^00-([0-9a-f]{32})-([0-9a-f]{16})-00$/;
const SAMPLED = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** A service for forward-auth that notes the traceparent of every call and lets it pass. */
async function startAuthService(t: TestContext): Promise<{ url: string; seen: (string | undefined)[] }> {
  const seen: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers.traceparent as string | undefined);
    res.writeHead(200, { 'x-user-id': 'u-1' }).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/verify`, seen };
}

/** An upstream WebSocket server that notes each handshake's traceparent. */
async function startWsUpstream(t: TestContext): Promise<{ target: string; seen: (string | undefined)[] }> {
  const http = createServer((_req, res) => res.end('plain'));
  const wss = new WebSocketServer({ server: http });
  const seen: (string | undefined)[] = [];
  wss.on('connection', (ws, req: IncomingMessage) => {
    seen.push(req.headers.traceparent as string | undefined);
    ws.on('error', () => undefined);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const c of wss.clients) c.terminate();
    http.close();
  });
  return { target: `127.0.0.1:${(http.address() as AddressInfo).port}`, seen };
}

function tracingAt(endpoint: string, extra: Record<string, unknown> = {}) {
  return (c: Record<string, unknown>) => void (c.tracing = { endpoint, serviceName: 'gw-under-test', ...extra });
}

/** worker.json `log.access` to `access.log` in the gateway's folder. */
function withAccessLog(c: Record<string, unknown>): void {
  c.log = { ...(c.log as Record<string, unknown>), access: { enabled: true, path: 'access.log' } };
}

/** The access log's `traceId` of the request to `path`, once its line is written. */
function loggedTraceId(gw: Gateway, path: string): Promise<string> {
  const file = join(gw.dir, 'access.log');
  return waitFor(`the access line of ${path}`, () => {
    if (!existsSync(file)) return undefined;
    const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
    const line = lines.map((l) => JSON.parse(l) as { path: string; traceId: string }).find((l) => l.path === path);
    return line?.traceId;
  });
}

const upstreamTraceparent = (r: { json: unknown }) => (r.json as { headers: Record<string, string> }).headers.traceparent!;
const byTrace = (spans: ReceivedSpan[], traceId: string) => spans.filter((s) => s.traceId === traceId);

test('tracing on: one trace per request, the gateway span parent of the upstream span, whose id the upstream receives', BOUNDED, async (t) => {
  const rx = await startOtlpReceiver(t);
  const up = await startUpstream(t);
  const auth = await startAuthService(t);
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    edit: (c) => {
      tracingAt(rx.url, { headersEnv: { 'x-otlp-token': 'SY_TEST_OTLP_TOKEN' } })(c);
      withAccessLog(c);
    },
    env: { SY_TEST_OTLP_TOKEN: 'otlp-secret-1' },
  });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['cluster', 'down', { targets: [`127.0.0.1:${await freePort()}`] }],
    ['route', 'plain', { cluster: 'up', pathPrefix: '/plain' }],
    ['route', 'authed', { cluster: 'up', pathPrefix: '/authed', steps: [{ code: 'forward-auth', settings: { url: auth.url, upstreamHeaders: ['x-user-id'] } }] }],
    ['route', 'down', { cluster: 'down', pathPrefix: '/down' }],
  ]);

  await t.test('requests without a traceparent: a new sampled trace each, SERVER span over CLIENT span', async () => {
    const sent: string[] = [];
    const requestIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await request(`${gw.dataUrl}/plain/item/${i}?q=1`);
      assert.equal(r.status, 200);
      sent.push(upstreamTraceparent(r));
      requestIds.push(String(r.headers['x-request-id']));
    }
    const ids = sent.map((tp) => SAMPLED.exec(tp));
    assert.ok(ids.every((m) => m !== null), sent.join('\n'));
    assert.equal(new Set(ids.map((m) => m![1])).size, 5, 'one trace per request');
    const spans = await rx.waitForSpans('the five traces', (s) => ids.every((m) => byTrace(s, m![1]!).length >= 2));
    for (const [i, m] of ids.entries()) {
      const trace = byTrace(spans, m![1]!);
      assert.equal(trace.length, 2);
      const server = trace.find((s) => s.kind === SERVER)!;
      const client = trace.find((s) => s.kind === CLIENT)!;
      assert.equal(server.parentSpanId, '', 'a new trace: the gateway span is its root');
      assert.equal(client.parentSpanId, server.spanId);
      assert.equal(client.spanId, m![2], "the upstream receives the upstream span's id");
      assert.equal(server.name, 'GET plain');
      assert.equal(server.attributes['http.request.method'], 'GET');
      assert.equal(server.attributes['url.path'], `/plain/item/${i}`);
      assert.equal(server.attributes['url.scheme'], 'http');
      assert.equal(server.attributes['server.address'], '127.0.0.1');
      assert.equal(server.attributes['client.address'], '127.0.0.1');
      assert.equal(server.attributes['http.route'], 'plain');
      assert.equal(server.attributes['switchyard.tenant'], 'default');
      assert.equal(server.attributes['switchyard.route'], 'plain');
      assert.equal(server.attributes['http.response.status_code'], 200);
      assert.equal(server.attributes['switchyard.request_id'], requestIds[i]);
      assert.equal(server.attributes['url.query'], undefined, 'the query is never recorded');
      assert.equal(client.attributes['server.address'], '127.0.0.1');
      assert.equal(client.attributes['server.port'], up.port);
      assert.equal(client.attributes['http.response.status_code'], 200);
      assert.equal(server.resource['service.name'], 'gw-under-test');
    }
    assert.equal(rx.exports[0]!['x-otlp-token'], 'otlp-secret-1', 'headersEnv values go with every export');
    assert.equal(await loggedTraceId(gw, '/plain/item/0?q=1'), ids[0]![1], "the access log's traceId is the trace's");
  });

  await t.test("an incoming sampled traceparent is continued: its span is the gateway span's parent, its tracestate goes on", async () => {
    const r = await request(`${gw.dataUrl}/plain/continued`, { headers: { traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'vendor=x1' } });
    assert.equal(r.status, 200);
    const m = SAMPLED.exec(upstreamTraceparent(r))!;
    assert.equal(m[1], TRACE);
    assert.notEqual(m[2], SPAN);
    assert.equal((r.json as { headers: Record<string, string> }).headers.tracestate, 'vendor=x1');
    const trace = byTrace(await rx.waitForSpans('the continued trace', (s) => byTrace(s, TRACE).length >= 2), TRACE);
    const server = trace.find((s) => s.kind === SERVER)!;
    const client = trace.find((s) => s.kind === CLIENT)!;
    assert.equal(server.parentSpanId, SPAN);
    assert.equal(client.parentSpanId, server.spanId);
    assert.equal(client.spanId, m[2]);
  });

  await t.test('an unsampled incoming traceparent goes on unchanged and makes no span; an invalid one starts a new trace', async () => {
    const unsampled = `00-${'a'.repeat(32)}-${SPAN}-00`;
    const r1 = await request(`${gw.dataUrl}/plain/unsampled`, { headers: { traceparent: unsampled } });
    assert.equal(upstreamTraceparent(r1), unsampled);
    const r2 = await request(`${gw.dataUrl}/plain/invalid`, { headers: { traceparent: `00-${TRACE.toUpperCase()}-${SPAN}-01`, tracestate: 'vendor=x2' } });
    const m = SAMPLED.exec(upstreamTraceparent(r2))!;
    assert.notEqual(m[1], TRACE.toLowerCase());
    assert.equal((r2.json as { headers: Record<string, string> }).headers.tracestate, undefined, "a new trace drops the old trace's state");
    // Spans are exported in the order requests ended: once the later trace is in, the earlier one would be.
    const spans = await rx.waitForSpans('the new trace', (s) => byTrace(s, m[1]!).length >= 2);
    assert.equal(byTrace(spans, 'a'.repeat(32)).length, 0);
    assert.equal(byTrace(spans, m[1]!).find((s) => s.kind === SERVER)!.parentSpanId, '');
  });

  await t.test("forward-auth's call is a CLIENT span of the same trace, and the service receives its id", async () => {
    const before = auth.seen.length;
    const r = await request(`${gw.dataUrl}/authed/x`);
    assert.equal(r.status, 200);
    const toAuth = SAMPLED.exec(auth.seen[before]!)!;
    const toUp = SAMPLED.exec(upstreamTraceparent(r))!;
    assert.equal(toAuth[1], toUp[1]);
    assert.notEqual(toAuth[2], toUp[2]);
    const trace = byTrace(await rx.waitForSpans('the authed trace', (s) => byTrace(s, toUp[1]!).length >= 3), toUp[1]!);
    const server = trace.find((s) => s.kind === SERVER)!;
    const calls = trace.filter((s) => s.kind === CLIENT);
    assert.equal(calls.length, 2);
    assert.ok(calls.every((c) => c.parentSpanId === server.spanId));
    assert.deepEqual(calls.map((c) => c.spanId).sort(), [toAuth[2], toUp[2]].sort());
  });

  await t.test('an unreachable upstream: the CLIENT span has error.type, the gateway span the 502', async () => {
    const r = await request(`${gw.dataUrl}/down/x`, { headers: { traceparent: `00-${'b'.repeat(32)}-${SPAN}-01` } });
    assert.equal(r.status, 502);
    const trace = byTrace(await rx.waitForSpans('the failed trace', (s) => byTrace(s, 'b'.repeat(32)).length >= 2), 'b'.repeat(32));
    const server = trace.find((s) => s.kind === SERVER)!;
    const client = trace.find((s) => s.kind === CLIENT)!;
    assert.equal(server.attributes['http.response.status_code'], 502);
    assert.equal(server.statusCode, 2);
    assert.equal(client.attributes['error.type'], 'ECONNREFUSED');
    assert.equal(client.statusCode, 2);
  });

  await t.test('spans still queued when the gateway stops reach the collector before the worker exits', async () => {
    const r = await request(`${gw.dataUrl}/plain/last`, { headers: { traceparent: `00-${'c'.repeat(32)}-${SPAN}-01` } });
    assert.equal(r.status, 200);
    // The batch processor sends every second; the drain sends at once.
    const stopped = await gw.stop('SIGTERM');
    assert.equal(stopped.code, 0);
    assert.equal(byTrace(rx.spans, 'c'.repeat(32)).length, 2);
  });
});

/** Median of the latencies (ms) of sequential GETs on one keep-alive connection, for `ms` (at least `min`, at most `max` requests). */
async function medianLatency(gw: Gateway, path: string, ms: number, min: number, max: number): Promise<{ median: number; n: number }> {
  const client = new KeepAliveClient(gw.dataPort);
  const times: number[] = [];
  const end = Date.now() + ms;
  try {
    while ((Date.now() < end || times.length < min) && times.length < max) {
      const t0 = process.hrtime.bigint();
      const a = await client.get(path);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      assert.equal(a?.status, 200, `request ${times.length} answered ${a?.status}`);
    }
  } finally {
    client.socket.destroy();
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)]!, n: times.length };
}

test('a collector that refuses connections or never answers slows and fails no request, and is warned about at most once a minute', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const entities: Parameters<typeof apply>[1] = [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'plain', { cluster: 'up', pathPrefix: '/plain' }],
  ];

  const refused = await startGateway(t, { keys: [ROOT_KEY], edit: tracingAt(`http://127.0.0.1:${await freePort()}/v1/traces`) });
  await apply(refused, entities);
  const warnings = () => refused.logLines().filter((l) => String((l as { msg?: string }).msg).startsWith('tracing:'));
  // An export gives up after its retries and timeout (5 s): requests go on meanwhile, every one answered.
  let n = 0;
  await waitFor('the warning about the collector', async () => ((n += (await medianLatency(refused, '/plain/r', 500, 10, 100_000)).n), warnings().length > 0), { timeoutMs: 20_000, intervalMs: 0 });
  n += (await medianLatency(refused, '/plain/r', 3_000, 10, 100_000)).n;
  assert.equal(warnings().length, 1, `one warning for ${n} requests: ${JSON.stringify(warnings())}`);
  refused.kill();

  const rx = await startOtlpReceiver(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: tracingAt(rx.url) });
  await apply(gw, entities);
  await medianLatency(gw, '/plain/warm', 500, 50, 100_000);
  const working = await medianLatency(gw, '/plain/w', 3_000, 200, 100_000);
  assert.ok(rx.spans.length > 0);
  rx.mode = 'hang';
  // Longer than an export's timeout: exports hang, time out and hang again while requests are measured.
  const hanging = await medianLatency(gw, '/plain/h', 7_000, 200, 200_000);
  assert.ok(rx.hung > 0, 'exports were left hanging while requests were measured');
  const bound = 2 * working.median + 20;
  t.diagnostic(`median latency: ${working.median.toFixed(2)} ms (${working.n} requests) with a working collector, ${hanging.median.toFixed(2)} ms (${hanging.n}) with a hanging one; ${rx.hung} exports hung`);
  assert.ok(hanging.median < bound, `median ${hanging.median.toFixed(2)} ms with a hanging collector (${hanging.n} requests) against ${working.median.toFixed(2)} ms with a working one (${working.n})`);
});

test('tracing off: the upstream still gets a traceparent, the incoming one unchanged or a new one; service calls and WebSocket handshakes too', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const auth = await startAuthService(t);
  const ws = await startWsUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: withAccessLog });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['cluster', 'ws', { targets: [ws.target] }],
    ['route', 'plain', { cluster: 'up', pathPrefix: '/plain' }],
    ['route', 'authed', { cluster: 'up', pathPrefix: '/authed', steps: [{ code: 'forward-auth', settings: { url: auth.url } }] }],
    ['route', 'ws', { cluster: 'ws', pathPrefix: '/ws', websocket: {} }],
  ]);

  const a = upstreamTraceparent(await request(`${gw.dataUrl}/plain/a`, { headers: { tracestate: 'vendor=s' } }));
  const b = upstreamTraceparent(await request(`${gw.dataUrl}/plain/b`));
  assert.match(a, NEW_UNSAMPLED);
  assert.match(b, NEW_UNSAMPLED);
  assert.notEqual(a.slice(3, 35), b.slice(3, 35));
  assert.equal(await loggedTraceId(gw, '/plain/a'), a.slice(3, 35), "the access log's traceId is the one sent upstream");

  for (const incoming of [`00-${TRACE}-${SPAN}-01`, `00-${TRACE}-${SPAN}-00`]) {
    const r = await request(`${gw.dataUrl}/plain/kept`, { headers: { traceparent: incoming, tracestate: 'vendor=k' } });
    assert.equal(upstreamTraceparent(r), incoming, 'passed on unchanged');
    assert.equal((r.json as { headers: Record<string, string> }).headers.tracestate, 'vendor=k');
  }
  for (const invalid of [`ff-${TRACE}-${SPAN}-01`, `00-${'0'.repeat(32)}-${SPAN}-01`, `00-${TRACE}-${SPAN}`]) {
    const r = await request(`${gw.dataUrl}/plain/invalid`, { headers: { traceparent: invalid, tracestate: 'vendor=i' } });
    const sent = (r.json as { headers: Record<string, string> }).headers;
    assert.match(sent.traceparent!, NEW_UNSAMPLED, invalid);
    assert.equal(sent.tracestate, undefined);
  }

  const r = await request(`${gw.dataUrl}/authed/x`);
  assert.equal(r.status, 200);
  assert.equal(auth.seen.at(-1), upstreamTraceparent(r), 'the service call carries the trace the upstream gets');
  await request(`${gw.dataUrl}/authed/y`, { headers: { traceparent: `00-${TRACE}-${SPAN}-01` } });
  assert.equal(auth.seen.at(-1), `00-${TRACE}-${SPAN}-01`);

  for (const headers of [{}, { traceparent: `00-${TRACE}-${SPAN}-01` }]) {
    const client = new WebSocket(`${gw.dataUrl.replace('http://', 'ws://')}/ws/x`, { headers });
    await new Promise<void>((resolve, reject) => client.once('open', () => resolve()).once('error', reject));
    client.terminate();
  }
  assert.match(ws.seen[0]!, NEW_UNSAMPLED);
  assert.equal(ws.seen[1], `00-${TRACE}-${SPAN}-01`);
});
