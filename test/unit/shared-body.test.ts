import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { SharedBody } from '../../src/worker/shared-body.js';

const bytes = (n: number, from: number) => Buffer.from(Array.from({ length: n }, (_, i) => (from + i) % 251));
const source = () => Readable.from([bytes(300, 0), bytes(300, 300)]);
const whole = Buffer.concat([bytes(300, 0), bytes(300, 300)]);

async function drain(body: Buffer | Readable | null): Promise<Buffer> {
  if (body === null || Buffer.isBuffer(body)) return body ?? Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

test('two readers with different limits, both within them, get the same bytes; the upstream gets them as one Buffer', async () => {
  const body = new SharedBody(source());
  const [a, b] = await Promise.all([body.read(1000), body.read(5000)]);
  assert.equal(a, b);
  assert.deepEqual(a, whole);
  assert.equal(body.upstream(), a);
  assert.equal(body.tooLarge, false);
});

test('a reader over its own limit but within the route cap leaves the body for the upstream intact: what was read, then the rest', async () => {
  const body = new SharedBody(source());
  body.limit(10_000);
  await assert.rejects(body.read(100), /body over 100 bytes/);
  assert.deepEqual(await drain(body.upstream()), whole);
  assert.equal(body.tooLarge, false);
});

test('a later reader with a larger limit reads on from where the first stopped', async () => {
  const body = new SharedBody(source());
  await assert.rejects(body.read(100), /body over 100 bytes/);
  assert.deepEqual(await body.read(1000), whole);
  assert.deepEqual(await drain(body.upstream()), whole);
});

test('past the route cap: the read is refused and the body is too large (413)', async () => {
  const body = new SharedBody(source());
  body.limit(400);
  await assert.rejects(body.read(10_000), /body over 400 bytes/);
  assert.equal(body.tooLarge, true);
});

test('a cap set after the body was read still holds for the upstream', async () => {
  const body = new SharedBody(source());
  assert.equal((await body.read(1000)).length, 600);
  body.limit(500);
  await assert.rejects(drain(body.upstream()), /request body over 500 bytes/);
  assert.equal(body.tooLarge, true);
});

test('unread, the live stream goes upstream: whole within the cap, cut past it', async () => {
  const free = new SharedBody(source());
  assert.deepEqual(await drain(free.upstream()), whole);
  const capped = new SharedBody(source());
  capped.limit(400);
  await assert.rejects(drain(capped.upstream()), /request body over 400 bytes/);
  assert.equal(capped.tooLarge, true);
  await assert.rejects(capped.read(1000), /already on its way upstream/);
});
