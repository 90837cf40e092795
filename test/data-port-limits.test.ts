import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';
import { rawRequest } from './helpers/raw-http.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { BOUNDED, waitFor } from './helpers/wait.js';
import type { Json } from './helpers/json.js';

async function gatewayWith(t: Parameters<typeof startGateway>[0], limits: Record<string, number>): Promise<{ gw: Gateway; up: Upstream }> {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 1, edit: (c) => (c.limits = limits) });
  await apply(gw, [['cluster', 'c', { targets: [up.target] }], ['route', 'all', { cluster: 'c' }]]);
  return { gw, up };
}

/** Writes `parts` with `gapMs` between them; resolves with what came back and when the server closed. */
function dribble(port: number, parts: string[], gapMs: number): Promise<{ text: string; closedAfterMs: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = connect(port, '127.0.0.1');
    let text = '';
    let i = 0;
    const next = (): void => {
      if (i < parts.length && !sock.destroyed) sock.write(parts[i++]!, () => setTimeout(next, gapMs));
    };
    sock.on('connect', next);
    sock.on('data', (c: Buffer) => (text += c.toString('latin1')));
    sock.on('error', () => {});
    sock.on('close', () => resolve({ text, closedAfterMs: Date.now() - started }));
    setTimeout(() => sock.destroy(), 20_000).unref();
  });
}

/** The worker's warn lines for `limit` (they reach the log a moment after the answer). */
const limitLines = (gw: Gateway, limit: string) =>
  waitFor(`a ${limit} log line`, () => {
    const lines = gw.logLines().filter((l) => (l as { limit?: string }).limit === limit);
    return lines.length > 0 && lines;
  });

test('a request target over limits.maxTargetBytes is answered 414 and the connection closed; one at the limit is served', BOUNDED, async (t) => {
  const { gw, up } = await gatewayWith(t, { maxTargetBytes: 200 });
  const atLimit = await rawRequest(gw.dataPort, [`GET /${'a'.repeat(99)}?${'q'.repeat(99)} HTTP/1.1`, 'Host: a.test', 'Connection: close']);
  assert.equal(atLimit.status, 200, atLimit.raw.slice(0, 200));
  const over = await rawRequest(gw.dataPort, [`GET /${'a'.repeat(99)}?${'q'.repeat(100)} HTTP/1.1`, 'Host: a.test']);
  assert.equal(over.status, 414, over.raw.slice(0, 200));
  assert.equal(over.json.code, 'Svc.Data.TargetTooLong');
  assert.equal(over.headers.connection, 'close');
  assert.equal(up.requests.length, 1, 'the refused request never reached the upstream');
  await limitLines(gw, 'maxTargetBytes');
});

test('a Content-Length over limits.maxBodyBytes is answered 413 before the body is read; a chunked body is cut where it passes the limit', BOUNDED, async (t) => {
  const { gw, up } = await gatewayWith(t, { maxBodyBytes: 1000 });
  const ok = await rawRequest(gw.dataPort, ['POST /x HTTP/1.1', 'Host: a.test', 'Content-Length: 1000', 'Connection: close'], 'b'.repeat(1000));
  assert.equal(ok.status, 200);
  // Only the head is sent: the answer may not wait for the body.
  const declared = await rawRequest(gw.dataPort, ['POST /x HTTP/1.1', 'Host: a.test', 'Content-Length: 1001'], '', 3_000);
  assert.equal(declared.status, 413, declared.raw.slice(0, 200));
  assert.equal(declared.json.code, 'Svc.Data.BodyTooLarge');
  assert.equal(declared.headers.connection, 'close');

  const chunk = (n: number) => `${n.toString(16)}\r\n${'c'.repeat(n)}\r\n`;
  const chunked = await rawRequest(gw.dataPort, ['POST /x HTTP/1.1', 'Host: a.test', 'Transfer-Encoding: chunked'], chunk(600) + chunk(600) + '0\r\n\r\n');
  assert.equal(chunked.status, 413, chunked.raw.slice(0, 200));
  assert.equal(chunked.json.code, 'Svc.Data.BodyTooLarge');
  assert.equal(up.requests.filter((r) => r.bodyDone && r.bodyBytes > 1000).length, 0, 'no body over the limit reached the upstream whole');
  await limitLines(gw, 'maxBodyBytes');
});

test('a body that stops arriving is answered 408 after limits.bodyTimeoutMs and the connection closed', BOUNDED, async (t) => {
  const { gw } = await gatewayWith(t, { bodyTimeoutMs: 500 });
  const head = 'POST /x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 10\r\n\r\n';
  const r = await dribble(gw.dataPort, [head, 'abc'], 10);
  assert.match(r.text, /^HTTP\/1\.1 408 /, r.text.slice(0, 200));
  assert.match(r.text, /"code":"Svc\.Data\.BodyTimeout"/);
  assert.ok(r.closedAfterMs >= 450 && r.closedAfterMs < 3_000, `closed after ${r.closedAfterMs} ms`);
  // A body that keeps coming, slower than nothing but faster than the gap, is served.
  const steady = await dribble(gw.dataPort, [head, 'ab', 'cd', 'ef', 'gh', 'ij'], 300);
  assert.match(steady.text, /^HTTP\/1\.1 200 /, steady.text.slice(0, 200));
  await limitLines(gw, 'bodyTimeout');
});

test('limits.maxHeadBytes reaches uWS: a 20 KB head is served under a 32 KiB limit and answered 431 under the default', BOUNDED, async (t) => {
  // A fixed answer: a Node upstream would refuse a 20 KB head itself (its own 16 KiB limit).
  const big = ['GET /x HTTP/1.1', 'Host: a.test', `X-Big: ${'v'.repeat(20_000)}`, 'Connection: close'];
  const fixed = (gw: Gateway) => apply(gw, [['route', 'fixed', { directResponse: { statusCode: 200, body: 'fixed' } }]]);
  const raised = await startGateway(t, { keys: [ROOT_KEY], workers: 1, edit: (c) => (c.limits = { maxHeadBytes: 32_768 }) });
  await fixed(raised);
  const served = await rawRequest(raised.dataPort, big);
  assert.equal(served.status, 200, served.raw.slice(0, 200));
  const plain = await startGateway(t, { keys: [ROOT_KEY], workers: 1 });
  await fixed(plain);
  assert.equal((await rawRequest(plain.dataPort, big)).status, 431);
});

test('worker.json limits are checked: an unknown field or a value out of range stops `run` with the field named', BOUNDED, async (t) => {
  for (const [limits, field] of [
    [{ headerTimeoutMS: 1000 }, 'headerTimeoutMS'],
    [{ maxConnections: 0 }, 'maxConnections'],
    [{ maxHeadBytes: 512 }, 'maxHeadBytes'],
  ] as [Json, string][]) {
    await assert.rejects(startGateway(t, { keys: [ROOT_KEY], edit: (c) => (c.limits = limits) }), (err: Error) => {
      assert.match(err.message, new RegExp(`limits.*${field}|${field}`), err.message);
      return true;
    });
  }
});

test('limits.chunkedRequestBodies refuse: any Transfer-Encoding gets 411 and a close, so a chunk extension smuggles nothing; Content-Length bodies are served', BOUNDED, async (t) => {
  const { gw, up } = await gatewayWith(t, {});
  // Set per gateway: a second one with the strict policy.
  const strict = await startGateway(t, { keys: [ROOT_KEY], workers: 1, edit: (c) => (c.limits = { chunkedRequestBodies: 'refuse' }) });
  await apply(strict, [['cluster', 'c', { targets: [up.target] }], ['route', 'all', { cluster: 'c' }]]);
  const smuggle = 'POST /x HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a.test\r\n\r\n';
  const before = up.requests.length;
  const refused = await dribble(strict.dataPort, [smuggle], 0);
  assert.match(refused.text, /^HTTP\/1\.1 411 Length Required\r\n/, refused.text.slice(0, 200));
  assert.match(refused.text, /"code":"Svc\.Data\.LengthRequired"/);
  assert.equal(up.requests.length, before, 'nothing reached the upstream');
  await limitLines(strict, 'chunkedRequestBodies');
  const served = await rawRequest(strict.dataPort, ['POST /x HTTP/1.1', 'Host: a.test', 'Content-Length: 5', 'Connection: close'], 'hello');
  assert.equal(served.status, 200);
  // The default accepts chunked bodies: a plain one is served.
  const chunked = await rawRequest(gw.dataPort, ['POST /x HTTP/1.1', 'Host: a.test', 'Transfer-Encoding: chunked', 'Connection: close'], '5\r\nhello\r\n0\r\n\r\n');
  assert.equal(chunked.status, 200);
});
