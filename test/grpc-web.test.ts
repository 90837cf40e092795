import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { BOUNDED } from './helpers/wait.js';
import { HEADERS_FIRST, startEchoServer, streamPayload, type EchoServer } from './helpers/grpc.js';
import { echoReply, echoTypes, framed, grpcWebCall, type WireMode } from './helpers/grpc-web-wire.js';
import { startGrpcWebPage, type PageResults } from './helpers/grpc-web-page.js';
import { launchBrowser, newPage } from './helpers/browser.js';

/**
 * gRPC-Web through the gateway: a node-engine gateway (HTTP/1.1 and h2c on the data port), and a uws one (HTTP/1.1)
 * whose route `grpc: {web: true}` translates a browser's gRPC-Web calls into gRPC to a
 * real @grpc/grpc-js server on a cluster `protocol: "h2c"`. Driven from Node with the
 * bytes the grpc-web package sends, and from Chromium with the grpc-web package itself on
 * a page of another origin (the route's cors step grants it).
 */

const PREFIX = '/switchyard.test.Echo/';

interface WebGateway {
  gw: Gateway;
  echo: EchoServer;
  /** The page's origin (its own server). */
  origin: string;
  url(method: string): string;
}

/** `engine` uws: HTTP/1.1 only, which is all gRPC-Web needs. */
async function webGateway(t: { after(fn: () => unknown): void }, engine: 'node' | 'uws' = 'node'): Promise<WebGateway> {
  const echo = await startEchoServer(t);
  const { origin } = await startGrpcWebPage(t);
  const gw = await startGateway(t as TestContext, {
    engine,
    keys: [ROOT_KEY],
    edit: (c) => {
      if (engine === 'node') (c.listen as Record<string, unknown>).h2c = true;
    },
  });
  await apply(gw, [
    ['cluster', 'echo', { targets: [echo.address], protocol: 'h2c' }],
    ['route', 'web', {
      pathPrefix: PREFIX,
      cluster: 'echo',
      grpc: { web: true },
      // A trailers-only answer's status is in the head: the page reads it only when exposed.
      steps: [{ code: 'cors', settings: { origins: [origin], methods: ['POST'], exposeHeaders: ['grpc-status', 'grpc-message'] } }],
    }],
  ]);
  return { gw, echo, origin, url: (method) => `${gw.dataUrl}${PREFIX}${method}` };
}

const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
});
const shared: Partial<Record<'node' | 'uws', Promise<WebGateway>>> = {};
const suite = { after: (fn: () => unknown) => void cleanups.push(fn) };
const sharedGateway = (engine: 'node' | 'uws' = 'node') => (shared[engine] ??= webGateway(suite, engine));

const WEB_TYPE: Record<WireMode, string> = { text: 'application/grpc-web-text+proto', binary: 'application/grpc-web+proto' };

for (const [engine, mode] of [['node', 'text'], ['node', 'binary'], ['uws', 'text'], ['uws', 'binary']] as const) {
  test(`${engine} engine, HTTP/1.1 ${mode}: unary — the reply byte for byte, the upstream saw gRPC, the trailer frame says OK`, BOUNDED, async () => {
    const g = await sharedGateway(engine);
    const payload = randomBytes(100_000);
    // Sent in two writes cut at an odd byte: the gateway decodes (text) and forwards it as a stream.
    const a = await grpcWebCall(g.url('Unary'), framed(echoTypes.EchoRequest, { message: 'hello web', payload }), mode, { headers: { 'x-team': 'web' }, splitAt: 1001 });
    assert.equal(a.status, 200);
    assert.equal(a.headers['content-type'], WEB_TYPE[mode]);
    assert.equal(a.headers['content-length'], undefined, 'no length: the body is re-framed (and re-encoded in text)');
    if (mode === 'text') assert.match(a.wire.toString('latin1'), /^[A-Za-z0-9+/=]+$/, 'the text body is base64 only');
    assert.equal(a.messages.length, 1);
    const reply = echoReply(a.messages[0]!);
    assert.equal(reply.message, 'hello web');
    assert.ok(reply.payload.equals(payload), 'the payload came back byte for byte');
    const seen = JSON.parse(reply.metadata) as Record<string, string>;
    assert.equal(seen['x-team'], 'web', "the client's own metadata reached the upstream");
    assert.equal(seen['x-grpc-web'], undefined, 'the gRPC-Web marker stays at the gateway');
    assert.deepEqual([a.trailers?.['grpc-status'], a.afterTrailers], ['0', 0]);
  });

  test(`${engine} engine, HTTP/1.1 ${mode}: server streaming — 50 messages in order, then one trailer frame`, BOUNDED, async () => {
    const g = await sharedGateway(engine);
    const a = await grpcWebCall(g.url('ServerStream'), framed(echoTypes.StreamRequest, { count: 50, size: 100 }), mode);
    assert.equal(a.status, 200);
    assert.equal(a.messages.length, 50);
    a.messages.forEach((m, i) => {
      const r = echoReply(m);
      assert.equal(r.index, i);
      assert.ok(r.payload.equals(streamPayload(i, 100)), `message ${i}`);
    });
    assert.deepEqual([a.trailers?.['grpc-status'], a.afterTrailers], ['0', 0]);
  });

  test(`${engine} engine, HTTP/1.1 ${mode}: an upstream error — trailers-only in the head, or in the trailer frame after the head`, BOUNDED, async () => {
    const g = await sharedGateway(engine);
    const fail = framed(echoTypes.EchoRequest, { message: 'fail:5' });
    // grpc-js answers a failure before any message trailers-only: the status rides in the head.
    const only = await grpcWebCall(g.url('Unary'), fail, mode);
    assert.equal(only.status, 200);
    assert.equal(only.headers['grpc-status'], '5');
    assert.equal(decodeURIComponent(String(only.headers['grpc-message'])), 'failed on purpose');
    assert.deepEqual([only.messages.length, only.trailers], [0, null]);
    // After the upstream's head, the status comes in its trailers: the client gets the trailer frame.
    const framedStatus = await grpcWebCall(g.url('Unary'), fail, mode, { headers: { [HEADERS_FIRST]: '1' } });
    assert.equal(framedStatus.headers['grpc-status'], undefined);
    assert.equal(framedStatus.trailers?.['grpc-status'], '5');
    assert.equal(decodeURIComponent(framedStatus.trailers?.['grpc-message'] ?? ''), 'failed on purpose');
  });
}

test('Chromium with the grpc-web package, text and binary: unary, a server stream, and failures read from the head and from the trailer frame', BOUNDED, async (t) => {
  const g = await sharedGateway();
  const browser = await launchBrowser(t);
  const page = await newPage(browser);
  await page.goto(`${g.origin}/`);
  for (const format of ['text', 'binary']) {
    const r = await page.evaluate(
      // globalThis is the page's window here: the function runs in the browser.
      ([base, f]) => (globalThis as unknown as { echoCalls(base: string, format: string): Promise<PageResults> }).echoCalls(base!, f!),
      [g.gw.dataUrl, format],
    );
    assert.equal(r.unary.message, 'from the page', format);
    assert.deepEqual(r.unary.payload, [0, 1, 2, 250, 255], format);
    const seen = JSON.parse(r.unary.metadata) as Record<string, string>;
    assert.equal(seen['x-team'], 'web', `${format}: the page's metadata reached the upstream`);
    assert.equal(seen.origin, g.origin, `${format}: a cross-origin call`);
    assert.equal(r.stream.error, null, `${format}: the stream ended without error`);
    assert.equal(r.stream.status?.code, 0, format);
    assert.deepEqual(r.stream.replies.map((m) => m.index), Array.from({ length: 20 }, (_, i) => i), format);
    r.stream.replies.forEach((m, i) => assert.deepEqual(m.payload, [...streamPayload(i, 40)], `${format}: message ${i}`));
    assert.deepEqual(r.failTrailersOnly, { code: 5, message: 'failed on purpose' }, `${format}: status from the head (exposed by cors)`);
    assert.deepEqual(r.failInTrailers, { code: 5, message: 'failed on purpose' }, `${format}: status from the trailer frame`);
  }
});
