import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, apply, clusterStatus } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { patternSha256, startUpstream, writePattern } from './helpers/upstream.js';
import { rawExchange } from './helpers/raw-exchange.js';
import { BOUNDED, sleep, waitFor } from './helpers/wait.js';
import type { Json } from './helpers/json.js';

const SLACK_MS = 2_500;

/** POSTs `size` bytes of PATTERN, with Content-Length or chunked; resolves with the status and the upstream's echo. */
function upload(port: number, path: string, size: number, chunked: boolean): Promise<{ status: number; echo: Json }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(size) };
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path, agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, echo: text.startsWith('{') ? JSON.parse(text) : text }));
    });
    req.on('error', reject);
    void writePattern(req, size).then(() => req.end());
  });
}

/** A chunked body of the given bytes, in chunks of 100 bytes, with the last chunk. */
function chunkedBody(bytes: number): string {
  let out = '';
  for (let left = bytes; left > 0; left -= 100) out += `${Math.min(100, left).toString(16)}\r\n${'c'.repeat(Math.min(100, left))}\r\n`;
  return `${out}0\r\n\r\n`;
}

test('request bodies are read whole before an upstream connection is taken, up to the buffer size; larger ones and maxBytes 0 stream', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { workers: 1, keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'buf', { targets: [up.target], timeouts: { bodyMs: 20_000 } }],
    ['cluster', 'strict', { targets: [up.target], timeouts: { bodyMs: 1_500 } }],
    ['cluster', 'nobuf', { targets: [up.target], requestBuffering: { maxBytes: 0 } }],
    ['route', 'buffered', { cluster: 'buf', pathPrefix: '/buffered' }],
    ['route', 'stepped', { cluster: 'buf', pathPrefix: '/stepped', steps: [{ code: 'request-headers', settings: { set: { 'x-step': '1' } } }] }],
    ['route', 'stream', { cluster: 'buf', pathPrefix: '/stream', requestBuffering: { maxBytes: 0 } }],
    ['route', 'nobuf', { cluster: 'nobuf', pathPrefix: '/nobuf' }],
    ['route', 'rebuf', { cluster: 'nobuf', pathPrefix: '/rebuf', requestBuffering: { maxBytes: 1024 } }],
    ['route', 'strict', { cluster: 'strict', pathPrefix: '/strict' }],
    ['route', 'capped', { cluster: 'buf', pathPrefix: '/capped', steps: [{ code: 'request-size-limit', settings: { maxBytes: 1_000 } }] }],
  ]);
  const seen = (path: string) => up.requests.filter((r) => r.url === path);

  /** Sends a 10-byte body one byte at a time; before the last byte, reports whether the upstream already had the request. */
  async function slowUpload(path: string): Promise<{ earlyAtUpstream: boolean; status: number | undefined; echo: Json }> {
    const ex = rawExchange(gw.dataPort, [`POST ${path} HTTP/1.1`, 'Host: gw', 'Content-Length: 10'], 'x');
    for (let i = 1; i < 9; i++) {
      await sleep(100);
      ex.sock.write('x');
    }
    await sleep(300);
    const earlyAtUpstream = seen(path).length > 0;
    ex.sock.write('x');
    const a = await ex.answer;
    ex.sock.destroy();
    return { earlyAtUpstream, status: a?.status, echo: a && a.body.startsWith('{') ? JSON.parse(a.body) : a?.body };
  }

  await t.test('a slow upload reaches the upstream only once whole: routes with and without steps, and a route buffer over a cluster set to stream', async () => {
    for (const path of ['/buffered/slow', '/stepped/slow', '/rebuf/slow']) {
      const r = await slowUpload(path);
      assert.equal(r.earlyAtUpstream, false, `${path}: no upstream request before the body is whole`);
      assert.equal(r.status, 200, path);
      assert.equal(r.echo.bodyBytes, 10);
      assert.equal(r.echo.headers['content-length'], '10');
    }
    assert.equal(seen('/stepped/slow')[0]!.headers['x-step'], '1');
  });

  await t.test('maxBytes 0 (route or cluster) streams: the upstream has the request while the body still arrives', async () => {
    for (const path of ['/stream/slow', '/nobuf/slow']) {
      const r = await slowUpload(path);
      assert.equal(r.earlyAtUpstream, true, `${path}: streamed`);
      assert.equal(r.status, 200);
      assert.equal(r.echo.bodyBytes, 10);
    }
  });

  await t.test('a 1 MiB upload (buffer 64 KiB) still streams and arrives intact, with Content-Length and chunked', async () => {
    for (const chunked of [false, true]) {
      const r = await upload(gw.dataPort, `/buffered/big-${chunked}`, 1 << 20, chunked);
      assert.equal(r.status, 200);
      assert.equal(r.echo.bodyBytes, 1 << 20);
      assert.equal(r.echo.bodySha256, patternSha256(1 << 20));
      if (chunked) assert.equal(r.echo.headers['transfer-encoding'], 'chunked', 'the rest was streamed');
    }
  });

  await t.test('a small chunked body goes upstream whole with Content-Length and without Transfer-Encoding', async () => {
    const buffered = await rawExchange(gw.dataPort, ['POST /buffered/chunked HTTP/1.1', 'Host: gw', 'Transfer-Encoding: chunked'], chunkedBody(1_000)).answer;
    assert.equal(buffered?.status, 200, buffered?.body);
    const echo = JSON.parse(buffered!.body);
    assert.equal(echo.bodyBytes, 1_000);
    assert.equal(echo.headers['content-length'], '1000');
    assert.equal(echo.headers['transfer-encoding'], undefined);
    // An empty chunked body: Content-Length 0.
    const empty = await rawExchange(gw.dataPort, ['POST /buffered/empty HTTP/1.1', 'Host: gw', 'Transfer-Encoding: chunked'], '0\r\n\r\n').answer;
    assert.equal(empty?.status, 200);
    assert.equal(JSON.parse(empty!.body).headers['content-length'], '0');
  });

  await t.test('buffered uploads keep the client connection alive: request after request on one connection', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    for (let i = 0; i < 3; i++) {
      const r = await new Promise<{ status: number; reused: boolean; text: string }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: gw.dataPort, method: 'POST', path: `/buffered/kept-${i}`, agent, headers: { 'content-length': '5' } }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, reused: req.reusedSocket, text }));
        });
        req.on('error', reject);
        req.end('hello');
      });
      assert.equal(r.status, 200);
      assert.equal(JSON.parse(r.text).bodyBytes, 5);
      assert.equal(r.reused, i > 0, `request ${i} on the kept connection`);
    }
  });

  await t.test("an upload that does not arrive whole within the cluster's bodyMs gets 408 Svc.Data.RequestTimeout and the connection closes", async () => {
    const ex = rawExchange(gw.dataPort, ['POST /strict/never HTTP/1.1', 'Host: gw', 'Content-Length: 100'], 'x');
    const trickle = setInterval(() => ex.sock.write('x'), 200);
    t.after(() => clearInterval(trickle));
    const a = await ex.answer;
    clearInterval(trickle);
    assert.ok(a);
    assert.equal(a.status, 408);
    assert.equal(a.code, 'Svc.Data.RequestTimeout');
    assert.ok(a.ms >= 1_400 && a.ms <= 1_500 + SLACK_MS, `answered after ${Math.round(a.ms)} ms`);
    assert.equal(a.headers.connection, 'close');
    await waitFor('the gateway closed the connection', () => ex.sock.destroyed || ex.sock.readableEnded);
    assert.equal(seen('/strict/never').length, 0);
  });

  await t.test("a body cap holds on a buffered body: a chunked body over request-size-limit's maxBytes gets 413, one under goes through whole", async () => {
    const over = await rawExchange(gw.dataPort, ['POST /capped/over HTTP/1.1', 'Host: gw', 'Transfer-Encoding: chunked'], chunkedBody(5_000)).answer;
    assert.equal(over?.status, 413);
    assert.equal(over?.code, 'Svc.Data.TooLarge');
    assert.equal(seen('/capped/over').length, 0, 'refused before any connection');
    const under = await rawExchange(gw.dataPort, ['POST /capped/under HTTP/1.1', 'Host: gw', 'Transfer-Encoding: chunked'], chunkedBody(500)).answer;
    assert.equal(under?.status, 200);
    assert.equal(JSON.parse(under!.body).headers['content-length'], '500');
  });

  await t.test('a client that leaves during the read frees it: nothing reaches the upstream, the worker serves on', async () => {
    const [before] = (await clusterStatus(gw)).workers;
    for (let i = 0; i < 20; i++) {
      const ex = rawExchange(gw.dataPort, [`POST /buffered/gone-${i} HTTP/1.1`, 'Host: gw', 'Content-Length: 1000'], 'x'.repeat(500));
      await waitFor('connected', () => !ex.sock.connecting);
      await sleep(20);
      ex.sock.destroy();
    }
    const r = await request(`${gw.dataUrl}/buffered/after`, { method: 'POST', body: 'fine' });
    assert.equal(r.status, 200);
    assert.equal(r.json.bodyBytes, 4);
    assert.equal(up.requests.filter((q) => q.url.startsWith('/buffered/gone')).length, 0);
    const [after] = (await clusterStatus(gw)).workers;
    assert.equal(after!.pid, before!.pid, 'the worker never died');
  });
});
