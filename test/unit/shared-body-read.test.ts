import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { RequestFlow } from '../../src/worker/flow.js';
import type { StepRequest } from '../../src/steps/step.js';

const request: StepRequest = { method: 'POST', path: '/x', query: null, headers: [], remoteAddress: '127.0.0.1', clientAddress: '127.0.0.1', clientAddressTrusting: () => '127.0.0.1', localPort: '', scheme: 'http', requestId: '', requestIdHeader: null, setRequestId: () => {}, header: () => undefined, headerList: () => undefined };

test('steps reading the body at once with different limits: each is judged by its own limit', async () => {
  // Regression: the shared read stopped at the first caller's limit, so a body-validate with
  // maxBytes 1000 was refused a 500-byte body because another member asked with 100.
  const flow = new RequestFlow(request, Readable.from([Buffer.alloc(500, 'a')]));
  const small = flow.readBody(100).then(() => 'ok', (e: Error) => `refused: ${e.message}`);
  const large = flow.readBody(1000).then((b) => `ok ${b.length}`, (e: Error) => `refused: ${e.message}`);
  assert.deepEqual(await Promise.all([small, large]), ['refused: body over 100 bytes', 'ok 500']);
});

test('the shared read still stops at the route’s cap and at the largest limit asked for', async () => {
  const capped = new RequestFlow(request, Readable.from([Buffer.alloc(300), Buffer.alloc(300)]));
  capped.limitBody(400);
  await assert.rejects(capped.readBody(10_000), /body over 400 bytes/);
  assert.equal(capped.bodyTooLarge, true);
  const asked = new RequestFlow(request, Readable.from([Buffer.alloc(300), Buffer.alloc(300)]));
  await assert.rejects(asked.readBody(500), /body over 500 bytes/);
});
