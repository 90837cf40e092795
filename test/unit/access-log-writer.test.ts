import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pbkdf2 } from 'node:crypto';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { AccessLog } from '../../src/worker/observe/access-log.js';
import type { AccessLogSettings } from '../../src/worker/observe/access-line.js';
import type { RequestRecord } from '../../src/worker/observe/request-record.js';
import { createLogger } from '../../src/shared/logger.js';
import { tempDir } from '../helpers/gateway.js';

const silent = createLogger('silent');

function record(i: number): RequestRecord {
  return {
    ...{ startedAt: Date.now(), durationMs: 1, requestId: `r${i}`, tenant: 'default', route: 'r', method: 'GET', path: `/n/${i}`, query: null },
    ...{ status: 200, bytesReceived: 0, bytesSent: 2, upstream: null, upstreamMs: null, client: '127.0.0.1', userAgent: undefined, referer: undefined, traceId: null },
  };
}

const settings = (path: string, over: Partial<AccessLogSettings> = {}): AccessLogSettings => ({ format: 'json', sample: 1, fields: ['requestId'], path, redactQuery: [], ...over });

/** The request ids of the file's lines ([] while it does not exist yet: it is opened asynchronously). */
const ids = (file: string) =>
  (existsSync(file) ? readFileSync(file, 'utf8') : '')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { requestId: string }).requestId);

test('lines reach the file (its folder made) once flushed, in the order recorded', async (t) => {
  const file = join(tempDir(t), 'deep', 'er', 'access.log');
  const log = new AccessLog(settings(file), silent);
  for (let i = 0; i < 1000; i++) log.write(record(i));
  await log.flush(5_000);
  assert.deepEqual(ids(file), Array.from({ length: 1000 }, (_, i) => `r${i}`));
});

test('a request is logged when random() < sample; sample 1 never draws', async (t) => {
  const dir = tempDir(t);
  let draws = 0;
  const seq = [0.05, 0.3, 0.29, 0.99, 0.0, 0.3];
  const sampled = new AccessLog(settings(join(dir, 'a.log'), { sample: 0.3 }), silent, () => seq[draws++]!);
  seq.forEach((_, i) => sampled.sampled() && sampled.write(record(i)));
  await sampled.flush(5_000);
  assert.deepEqual(ids(join(dir, 'a.log')), ['r0', 'r2', 'r4']);

  const all = new AccessLog(settings(join(dir, 'b.log')), silent, () => assert.fail('sample 1 draws no random number'));
  if (all.sampled()) all.write(record(0));
  await all.flush(5_000);
  assert.deepEqual(ids(join(dir, 'b.log')), ['r0']);

  const none = new AccessLog(settings(join(dir, 'c.log'), { sample: 0 }), silent, () => 0);
  if (none.sampled()) none.write(record(0));
  await none.flush(5_000);
  assert.deepEqual(ids(join(dir, 'c.log')), []);
});

test('reopen after logrotate renamed the file: earlier lines stay in the renamed file, later ones go to a new file, none lost', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'access.log');
  const log = new AccessLog(settings(file), silent);
  for (let i = 0; i < 250; i++) log.write(record(i));
  await log.flush(5_000);
  // Lines still held or being written when the file is renamed may land in either file, in order.
  for (let i = 250; i < 500; i++) log.write(record(i));
  renameSync(file, `${file}.1`);
  log.reopen();
  for (let i = 500; i < 1000; i++) log.write(record(i));
  await log.flush(5_000);
  const before = ids(`${file}.1`);
  const after = ids(file);
  assert.ok(before.length >= 250 && after.length >= 500, `${before.length} lines before, ${after.length} after`);
  assert.deepEqual([...before, ...after], Array.from({ length: 1000 }, (_, i) => `r${i}`), 'every line once, in order');
});

test('lines are written byte for byte as formatted: multi-byte characters, lone surrogates, and a line longer than a chunk', async (t) => {
  const file = join(tempDir(t), 'access.log');
  const log = new AccessLog(settings(file, { fields: ['requestId', 'userAgent'] }), silent);
  const agents = ['plain', 'é ü ß', '日本語のエージェント', 'emoji 🚀', 'lone \ud800 surrogate', 'x'.repeat(40_000), '€'.repeat(12_000), 'after'];
  const expected: string[] = [];
  for (let i = 0; i < 3000; i++) {
    const userAgent = agents[i % agents.length]!;
    log.write({ ...record(i), userAgent });
    expected.push(JSON.stringify({ requestId: `r${i}`, userAgent }));
  }
  await log.flush(5_000);
  const lines = readFileSync(file, 'utf8').split('\n');
  assert.equal(lines.pop(), '', 'the file ends with a newline');
  assert.equal(lines.length, expected.length);
  for (let i = 0; i < lines.length; i++) assert.deepEqual(JSON.parse(lines[i]!), JSON.parse(expected[i]!), `line ${i}`);
});

test('lines written in a turn of the event loop reach the file through flushSync in that same turn (the exit hook loses none)', async (t) => {
  const file = join(tempDir(t), 'access.log');
  const log = new AccessLog(settings(file), silent);
  log.write(record(0));
  await log.flush(5_000); // the file is open
  // Every thread of libuv's pool busy, as on a loaded worker: a write handed to the pool now waits.
  const busy = Array.from({ length: 16 }, () => new Promise((resolve) => pbkdf2('p', 's', 200_000, 32, 'sha256', resolve)));
  for (let i = 1; i < 4; i++) log.write(record(i));
  log.flushSync(1_000);
  assert.deepEqual(ids(file), ['r0', 'r1', 'r2', 'r3']);
  await Promise.all(busy);
});
