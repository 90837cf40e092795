import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startEngine } from '../helpers/fake-engine-handlers.js';

/** Opens a raw connection, sends `text`, resolves with all it reads until the server closes (or `ms`). */
function raw(port: number, text: string, ms = 3_000): Promise<{ data: string; elapsed: number; socket: Socket }> {
  return new Promise((resolve) => {
    const start = Date.now();
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('error', () => {});
    const done = (): void => resolve({ data, elapsed: Date.now() - start, socket });
    socket.on('close', done);
    setTimeout(() => (socket.destroy(), done()), ms).unref();
  });
}

test('first head deadline: a slow head gets the 408 envelope; another connection from the same address is served', async (t) => {
  const r = await startEngine({}, { headerTimeoutMs: 500 });
  t.after(() => r.engine.stopAccepting());
  const slow = raw(r.port, 'GET /hello HTTP/1.1\r\nhost: a\r\n');
  const fast = await raw(r.port, 'GET /hello HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n');
  assert.match(fast.data, /^HTTP\/1\.1 200/);
  const s = await slow;
  assert.match(s.data, /^HTTP\/1\.1 408[\s\S]*Svc\.Data\.HeadTimeout/);
  assert.ok(s.elapsed < 1_500, `answered in ${s.elapsed} ms`);
});

test('connection cap: the connection over it gets 503 and is closed', async (t) => {
  const r = await startEngine({}, { maxConnections: 2 });
  t.after(() => r.engine.stopAccepting());
  const held = [raw(r.port, ''), raw(r.port, '')];
  await new Promise((res) => setTimeout(res, 200));
  const over = await raw(r.port, '');
  assert.match(over.data, /^HTTP\/1\.1 503[\s\S]*Svc\.Data\.TooManyConnections/);
  for (const h of held) (await Promise.race([h, new Promise<null>((res) => setTimeout(() => res(null), 10))]))?.socket.destroy();
});

test('a head over maxHeadBytes gets 431, a malformed one 400', async (t) => {
  const r = await startEngine({}, { maxHeadBytes: 1024 });
  t.after(() => r.engine.stopAccepting());
  const big = await raw(r.port, `GET /hello HTTP/1.1\r\nhost: a\r\nx-big: ${'y'.repeat(4096)}\r\n\r\n`);
  assert.match(big.data, /^HTTP\/1\.1 431[\s\S]*Svc\.Data\.HeadTooLarge/);
  const bad = await raw(r.port, 'GET /hello HTTP/1.1\r\nbad header\r\n\r\n');
  assert.match(bad.data, /^HTTP\/1\.1 400[\s\S]*Svc\.Data\.BadRequest/);
});
