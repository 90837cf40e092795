import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { BodyDeadline, readAhead } from '../../src/worker/request-buffer.js';

/** A body stream fed by hand, as the Exchange feeds it from uWS. */
function feed(): Readable {
  return new Readable({ read() {} });
}

function read(body: Readable, max: number, ms = 5_000): Promise<Buffer | Readable | Error> {
  return new Promise((resolve) => readAhead(body, max, ms, resolve));
}

async function drain(s: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

test('a body that ends within max comes back whole as one Buffer', async () => {
  const body = feed();
  const r = read(body, 16);
  body.push(Buffer.from('hello '));
  body.push(Buffer.from('world'));
  body.push(null);
  const b = await r;
  assert.ok(Buffer.isBuffer(b));
  assert.equal(b.toString(), 'hello world');
});

test('a body of exactly max bytes is buffered; one byte more streams', async () => {
  const whole = feed();
  const r1 = read(whole, 4);
  whole.push(Buffer.from('abcd'));
  whole.push(null);
  assert.equal(((await r1) as Buffer).toString(), 'abcd');

  const over = feed();
  const r2 = read(over, 4);
  over.push(Buffer.from('abcd'));
  over.push(Buffer.from('e'));
  const s = await r2;
  assert.ok(s instanceof Readable, 'handed on as a stream');
  over.push(Buffer.from('fgh'));
  over.push(null);
  assert.equal((await drain(s)).toString(), 'abcdefgh', 'the bytes read ahead come first, then the rest, in order');
});

test('a body larger than max: the stream handed on carries every byte, in order, as the rest arrives', async () => {
  const body = feed();
  const r = read(body, 64 * 1024);
  const parts: Buffer[] = [];
  for (let i = 0; i < 40; i++) {
    const p = Buffer.alloc(8 * 1024, i);
    parts.push(p);
    body.push(p);
  }
  const s = await r;
  assert.ok(s instanceof Readable);
  const rest = Buffer.alloc(100_000, 0xee);
  parts.push(rest);
  setImmediate(() => {
    body.push(rest);
    body.push(null);
  });
  assert.deepEqual(await drain(s), Buffer.concat(parts));
});

test('a body that does not arrive within the deadline: BodyDeadline, and the stream is released', async () => {
  const body = feed();
  const r = read(body, 1024, 80);
  body.push(Buffer.from('a'));
  const err = await r;
  assert.ok(err instanceof BodyDeadline, String(err));
  assert.equal(body.destroyed, true);
});

test('a client that leaves mid-body: its error ends the read, and a body already gone ends it at once', async () => {
  const body = feed();
  const r = read(body, 1024);
  body.push(Buffer.from('a'));
  body.destroy(new Error('client aborted'));
  assert.match(String(await r), /client aborted/);
  assert.match(String(await read(body, 1024)), /gone/);
});

test('a body that is closed without an end is not taken for a whole one', async () => {
  const body = feed();
  const r = read(body, 1024);
  body.push(Buffer.from('a'));
  body.destroy();
  assert.ok((await r) instanceof Error);
});
