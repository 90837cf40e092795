import { uwsSupport } from '../src/shared/uws-support.js';
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { freePort } from './helpers/ports.js';
import { ROOT_KEY, apply, clusterStatus, setEntity, publish, waitForWorkersAt } from './helpers/admin.js';
import { MiB, sampleRss, totalRss } from './helpers/proc.js';
import { sleep, waitFor } from './helpers/wait.js';

/** sha256("test"): the key-auth key the handshakes present. */
const API_KEY = 'test';
const KEY_AUTH = { code: 'key-auth', settings: { header: 'x-api-key', keys: [{ id: 'k', sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' }] } };
const TIMEOUT = { timeout: 120_000 };

interface Upstream {
  target: string;
  /** Handshakes the upstream accepted, by path. */
  opened: string[];
  /** Close codes and reasons the upstream received. */
  closes: { code: number; reason: string }[];
  /** Bytes the flood path has handed to its socket (the send callbacks), per connection. */
  flooded: number;
  /** The `/ws/deaf` connection, paused. */
  deaf?: WebSocket;
}

/**
 * An upstream `ws` server: `/ws/echo` echoes every message as it came (text or binary),
 * `/ws/closer` closes with 4002 when told to, `/ws/flood` sends 200 MiB as fast as its
 * socket takes it; plain HTTP requests get 200 "plain".
 */
async function startUpstream(t: TestContext): Promise<Upstream> {
  const http = createServer((_req, res) => res.end('plain'));
  const wss = new WebSocketServer({ server: http, maxPayload: 64 * MiB, handleProtocols: (p) => [...p][0] ?? false });
  const up: Upstream = { target: '', opened: [], closes: [], flooded: 0 };
  wss.on('connection', (ws, req: IncomingMessage) => {
    const path = req.url ?? '';
    up.opened.push(path);
    ws.on('close', (code, reason) => up.closes.push({ code, reason: reason.toString() }));
    ws.on('error', () => undefined);
    if (path.startsWith('/ws/flood')) return flood(ws, up);
    if (path.startsWith('/ws/deaf')) {
      up.deaf = ws;
      return ws.pause(); // reads nothing: what the client sends piles up before it
    }
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (path.startsWith('/ws/closer') && !isBinary && data.toString() === 'close-me') return ws.close(4002, 'bye-upstream');
      if (path.startsWith('/ws/closer') && !isBinary && data.toString() === 'send-big') return ws.send(Buffer.alloc(3 * MiB), { binary: true });
      ws.send(data as Buffer, { binary: isBinary });
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const c of wss.clients) c.terminate();
    http.close();
  });
  up.target = `127.0.0.1:${(http.address() as AddressInfo).port}`;
  return up;
}

const FLOOD_BYTES = 200 * MiB;

/** Sends FLOOD_BYTES in 1 MiB messages, never more than 4 MiB ahead of what its socket took. */
function flood(ws: WebSocket, up: Upstream): void {
  const chunk = Buffer.alloc(MiB, 7);
  let queued = 0;
  const pump = () => {
    while (queued < FLOOD_BYTES && ws.bufferedAmount < 4 * MiB && ws.readyState === WebSocket.OPEN) {
      queued += chunk.length;
      ws.send(chunk, { binary: true }, () => void (up.flooded += chunk.length));
    }
    if (queued < FLOOD_BYTES && ws.readyState === WebSocket.OPEN) setTimeout(pump, 5);
  };
  pump();
}

async function setup(t: TestContext, drainGraceMs?: number, engine?: 'uws' | 'node'): Promise<{ gw: Gateway; up: Upstream }> {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { workers: 1, keys: [ROOT_KEY], ...(drainGraceMs !== undefined && { drainGraceMs }), ...(engine && { engine }) });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'ws', { pathPrefix: '/ws', cluster: 'up', steps: [KEY_AUTH], websocket: { maxMessageBytes: 2 * MiB } }],
    ['route', 'plain', { pathPrefix: '/plain', cluster: 'up' }],
  ]);
  return { gw, up };
}

const wsUrl = (gw: Gateway, path: string) => `${gw.dataUrl.replace('http://', 'ws://')}${path}`;

/** A client WebSocket through the gateway, open (or rejected with the handshake's status and body). */
function connect(gw: Gateway, path: string, headers: Record<string, string> = { 'x-api-key': API_KEY }, protocols: string[] = []): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(gw, path), protocols, { headers, maxPayload: 256 * MiB, perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => reject(Object.assign(new Error(`handshake answered ${res.statusCode}`), { status: res.statusCode, body })));
    });
    ws.once('error', reject);
  });
}

function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

/** A deterministic pseudo-random sequence (xorshift), so a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

test('10,000 messages of 1 B to 1 MiB, text and binary, come back byte for byte through the gateway', TIMEOUT, async (t) => {
  const { gw } = await setup(t);
  const ws = await connect(gw, '/ws/echo', { 'x-api-key': API_KEY }, ['chat.v2', 'chat.v1']);
  assert.equal(ws.protocol, 'chat.v2', "the handshake's subprotocol is the upstream's choice");
  const rnd = random(25);
  const COUNT = 10_000;
  const WINDOW = 32;
  const sent: { data: Buffer; binary: boolean }[] = [];
  let next = 0;
  let received = 0;
  let bytes = 0;
  const t0 = Date.now();
  await new Promise<void>((resolve, reject) => {
    const sendOne = () => {
      // Sizes spread evenly on a log scale from 1 B to 1 MiB; every third message is text.
      const size = Math.max(1, Math.round(2 ** (rnd() * 20)));
      const binary = next % 3 !== 0;
      // Text mixes 1-, 2- and 3-byte UTF-8 characters, `size` bytes in all.
      const data = binary ? Buffer.alloc(size, next & 0xff) : Buffer.from('é✓a'.repeat(Math.floor(size / 6)) + 'a'.repeat(size % 6));
      for (let i = 0; i < data.length; i += 4096) data[i] = binary ? Math.floor(rnd() * 256) : data[i]!;
      sent.push({ data, binary });
      bytes += data.length;
      ws.send(data, { binary });
      next++;
    };
    ws.on('message', (data: RawData, isBinary: boolean) => {
      const want = sent.shift()!;
      try {
        assert.equal(isBinary, want.binary, `message ${received}: text stays text, binary stays binary`);
        assert.ok((data as Buffer).equals(want.data), `message ${received} (${want.data.length} B) came back byte for byte`);
      } catch (err) {
        return reject(err as Error);
      }
      if (++received === COUNT) return resolve();
      if (next < COUNT) sendOne();
    });
    ws.once('close', (code) => reject(new Error(`closed with ${code} after ${received} messages`)));
    for (let i = 0; i < WINDOW; i++) sendOne();
  });
  t.diagnostic(`${COUNT} messages, ${(bytes / MiB).toFixed(0)} MiB each way, in ${Date.now() - t0} ms`);
  ws.close(1000);
});

test('a handshake without the route API key gets 401 and no upgrade; the upstream never sees it', TIMEOUT, async (t) => {
  const { gw, up } = await setup(t);
  const err = (await connect(gw, '/ws/echo', {}).then(
    () => assert.fail('the handshake was upgraded'),
    (e: unknown) => e,
  )) as { status: number; body: string };
  assert.equal(err.status, 401);
  assert.equal(JSON.parse(err.body).code, 'Svc.Data.Unauthenticated');
  assert.deepEqual(up.opened, [], 'no upstream WebSocket was opened');
  const ws = await connect(gw, '/ws/echo');
  assert.deepEqual(up.opened, ['/ws/echo']);
  ws.close();
});

test('close codes and reasons pass both ways; a message over maxMessageBytes closes with 1009', TIMEOUT, async (t) => {
  const { gw, up } = await setup(t);
  const a = await connect(gw, '/ws/echo');
  a.close(4001, 'bye-client');
  await waitFor('the upstream saw the close', () => up.closes.length === 1);
  assert.deepEqual(up.closes[0], { code: 4001, reason: 'bye-client' }, "the client's close reached the upstream");

  const b = await connect(gw, '/ws/closer');
  const bClosed = closed(b);
  b.send('close-me');
  assert.deepEqual(await bClosed, { code: 4002, reason: 'bye-upstream' }, "the upstream's close reached the client");

  const c = await connect(gw, '/ws/echo');
  const cClosed = closed(c);
  let echoed = 0;
  c.on('message', () => echoed++);
  c.send(Buffer.alloc(3 * MiB), { binary: true });
  assert.equal((await cClosed).code, 1009, 'a message over the route maxMessageBytes (2 MiB) closes the connection with 1009');
  assert.equal(echoed, 0, 'the oversized message was never relayed');

  const d = await connect(gw, '/ws/closer');
  const dClosed = closed(d);
  d.send('send-big');
  assert.equal((await dClosed).code, 1009, "the upstream's message over maxMessageBytes closes the client with 1009 too");
});

test('300 handshakes in a row: each socket carries a message of up to 1 MiB both ways and closes with 1000 (an upgrade never ends the socket it made)', TIMEOUT, async (t) => {
  const { gw } = await setup(t);
  const HANDSHAKES = 300;
  const abnormal: number[] = [];
  for (let i = 0; i < HANDSHAKES; i++) {
    const ws = await connect(gw, '/ws/echo');
    const done = closed(ws);
    const size = 1 + ((i * 102_953) % MiB);
    const echoed = new Promise<string>((resolve) => ws.once('message', (d) => resolve(`${(d as Buffer).length}`)));
    ws.send(Buffer.alloc(size, i), { binary: true });
    const first = await Promise.race([echoed, done.then((c) => `closed ${c.code}`)]);
    if (first !== `${size}`) abnormal.push(i);
    ws.close(1000);
    const end = await done;
    if (end.code !== 1000 && !abnormal.includes(i)) abnormal.push(i);
  }
  assert.deepEqual(abnormal, [], `handshakes whose socket ended before its echo or without a 1000 close: ${abnormal.length} of ${HANDSHAKES}`);
});

test('a route without `websocket` refuses the upgrade with Svc.Data.UpgradeRefused; its plain GETs are proxied as before', TIMEOUT, async (t) => {
  const { gw, up } = await setup(t);
  const err = (await connect(gw, '/plain/x').then(
    () => assert.fail('the handshake was upgraded'),
    (e: unknown) => e,
  )) as { status: number; body: string };
  assert.equal(err.status, 400);
  assert.equal(JSON.parse(err.body).code, 'Svc.Data.UpgradeRefused');
  assert.deepEqual(up.opened, []);
  const r = await fetch(`${gw.dataUrl}/plain/x`);
  assert.equal(r.status, 200);
  assert.equal(await r.text(), 'plain');
});

test('a client that stops reading: the upstream is held back while it sends 200 MiB, worker RSS grows < 20 MB', TIMEOUT, async (t) => {
  const { gw, up } = await setup(t);
  const st = await clusterStatus(gw);
  const pids = st.workers.map((w) => w.pid!);
  // Warm-up: the worker's first large transfer grows V8's heap whether or not anything stalls.
  const warm = sampleRss(pids, 50);
  await receiveAll(await connect(gw, '/ws/flood-warm'), FLOOD_BYTES);
  const warmPeak = warm.stop().peak;
  await sleep(300);
  const baseline = Math.max(totalRss(pids), warmPeak);
  up.flooded = 0;

  const ws = await connect(gw, '/ws/flood');
  ws.pause(); // the client reads nothing: only kernel buffers and the gateway could take the bytes
  let delivered = 0;
  const count = (d: Buffer) => void (delivered += d.length);
  ws.on('message', count);
  const sampler = sampleRss(pids, 50);
  await sleep(4_000);
  const flooded = up.flooded;
  ws.off('message', count);
  const peak = sampler.stop().peak;
  const growth = peak - baseline;
  t.diagnostic(`while paused: client got ${(delivered / MiB).toFixed(1)} MiB (state ${ws.readyState}), upstream flushed ${(flooded / MiB).toFixed(1)} MiB; worker RSS baseline ${(baseline / MiB).toFixed(1)} MiB, peak ${(peak / MiB).toFixed(1)} MiB (+${(growth / MiB).toFixed(1)} MiB)`);
  assert.ok(flooded < 60 * MiB, `backpressure: the upstream could push only ${(flooded / MiB).toFixed(1)} MiB while the client read nothing`);
  assert.ok(growth < 20_000_000, `worker RSS grew by ${(growth / MiB).toFixed(1)} MiB (limit 20 MB)`);
  ws.resume();
  assert.equal(await receiveAll(ws, FLOOD_BYTES), FLOOD_BYTES, 'every byte arrives once the client reads again');
});

/** Reads messages until `total` bytes came; resolves with the count. */
function receiveAll(ws: WebSocket, total: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = 0;
    ws.on('message', (d: Buffer) => {
      n += d.length;
      if (n >= total) {
        ws.close();
        resolve(n);
      }
    });
    ws.once('close', (code) => (n < total ? reject(new Error(`closed ${code} after ${n} bytes`)) : undefined));
  });
}

// On both engines: the node engine's drain once destroyed upgraded sockets as idle connections (1006, not 1001).
for (const engine of uwsSupport().ok ? (['uws', 'node'] as const) : (['node'] as const))
test(`${engine} engine: a publish leaves an open WebSocket working; SIGTERM closes it with 1001 after the drain grace`, TIMEOUT, async (t) => {
  const { gw, up } = await setup(t, 1_000, engine);
  const ws = await connect(gw, '/ws/echo');
  const echo = (text: string) =>
    new Promise<string>((resolve) => {
      ws.once('message', (d: Buffer) => resolve(d.toString()));
      ws.send(text);
    });
  assert.equal(await echo('before'), 'before');
  await setEntity(gw, 'route', 'other', { pathPrefix: '/other', directResponse: { statusCode: 200, body: 'other' } });
  const p = await publish(gw);
  await waitForWorkersAt(gw, p.generation);
  assert.equal(await (await fetch(`${gw.dataUrl}/other`)).text(), 'other', 'the new generation serves');
  assert.equal(await echo('after'), 'after', 'the WebSocket opened on the old generation still relays');

  const wsClosed = closed(ws);
  const t0 = Date.now();
  const stop = gw.stop('SIGTERM');
  const c = await wsClosed;
  const ms = Date.now() - t0;
  assert.equal(c.code, 1001, 'the drain closes open WebSockets with 1001');
  assert.ok(ms >= 900, `closed after the drain grace (1 s), not before (${ms} ms)`);
  await waitFor('the upstream got 1001', () => up.closes.some((x) => x.code === 1001));
  assert.equal((await stop).code, 0);
});

test('limits: maxConnections answers 503 before upgrade, the idle timer closes with 1001, a dead upstream is a 502 and a denied one too', TIMEOUT, async (t) => {
  const { gw, up } = await setup(t);
  const deadPort = await freePort();
  await apply(gw, [
    ['route', 'cap', { pathPrefix: '/cap', cluster: 'up', websocket: { maxConnections: 2, idleTimeoutMs: 1_000 } }],
    ['cluster', 'dead', { targets: [`127.0.0.1:${deadPort}`] }],
    ['route', 'dead', { pathPrefix: '/dead', cluster: 'dead', websocket: true }],
    // The gateway's own admin port is refused to every tenant: by name it is caught when the worker connects.
    ['cluster', 'self', { targets: [`localhost:${gw.adminPort}`] }],
    ['route', 'self', { pathPrefix: '/self', cluster: 'self', websocket: true }],
  ]);
  const refusal = (path: string) =>
    connect(gw, path).then(
      (ws) => {
        ws.terminate();
        return assert.fail(`${path} was upgraded`);
      },
      (e: { status: number; body: string }) => ({ status: e.status, code: (JSON.parse(e.body) as { code: string }).code }),
    );

  const a = await connect(gw, '/cap/echo');
  const b = await connect(gw, '/cap/echo');
  assert.deepEqual(await refusal('/cap/echo'), { status: 503, code: 'Svc.Data.WebSocketsFull' }, 'a third WebSocket on a route capped at 2');
  const t0 = Date.now();
  const [ca, cb] = await Promise.all([closed(a), closed(b)]);
  const ms = Date.now() - t0;
  assert.equal(ca.code, 1001);
  assert.equal(cb.code, 1001);
  assert.ok(ms >= 900 && ms < 4_000, `closed by the 1 s idle timer (${ms} ms)`);
  const c = await connect(gw, '/cap/echo');
  c.close();
  assert.ok(up.opened.filter((p) => p === '/cap/echo').length === 3, 'the refused handshake never reached the upstream; freed slots are usable again');

  assert.deepEqual(await refusal('/dead/x'), { status: 502, code: 'Svc.Data.UpstreamUnreachable' });
  assert.deepEqual(await refusal('/self/x'), { status: 502, code: 'Svc.Data.UpstreamDenied' });
});

test('a client sending faster than a deaf upstream takes is closed with 1013 once a bounded amount waits', TIMEOUT, async (t) => {
  const { gw, up } = await setup(t);
  const ws = await connect(gw, '/ws/deaf');
  const wsClosed = closed(ws);
  const chunk = Buffer.alloc(MiB, 1);
  let sent = 0;
  // Up to 300 MiB, each message handed on once the previous one left the client's socket.
  while (ws.readyState === WebSocket.OPEN && sent < 300 * MiB) {
    await new Promise<void>((resolve) => ws.send(chunk, () => resolve()));
    sent += chunk.length;
    await new Promise((resolve) => setImmediate(resolve)); // a write callback can come before any read: let the close frame in
  }
  const c = await wsClosed;
  t.diagnostic(`client handed ${(sent / MiB).toFixed(0)} MiB to its socket before the close`);
  assert.equal(c.code, 1013, 'closed with 1013 (try again later)');
  assert.ok(sent < 100 * MiB, `the gateway stopped it well before 300 MiB (${(sent / MiB).toFixed(0)} MiB)`);
  up.deaf!.resume(); // reading again, the upstream finds its connection closed by the gateway
  await waitFor('the upstream was closed too', () => up.closes.length === 1, { timeoutMs: 10_000 });
});
