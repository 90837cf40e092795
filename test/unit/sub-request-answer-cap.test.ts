import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_ANSWER_BYTES, subRequest } from '../../src/steps/sub-request.js';
import type { Flow } from '../../src/steps/step.js';
import { ServicePools } from '../../src/worker/service-pools.js';
import { UpstreamGuard } from '../../src/shared/upstream-guard.js';

// The service listens on loopback: the policy is deliberately open.
const servicePool = new ServicePools(UpstreamGuard.allowAll()).pool;

const req = { req: { method: 'GET', path: '/x', query: null }, preview: () => ({ headers: [] }), traceCall: () => null } as unknown as Flow;

test('a called service answer is read whole only up to MAX_ANSWER_BYTES; a larger one fails the call', async (t) => {
  // Regression: forward-auth and http-callout read the service's whole answer into memory
  // per request, whatever its size; a service answering 50 MB did that for every request.
  const server = createServer((r, res) => {
    const size = Number(new URL(r.url!, 'http://x').searchParams.get('size'));
    res.writeHead(401, { 'content-type': 'text/plain' });
    // Streamed in 64 KiB pieces, no Content-Length: the cap must hold while reading.
    let left = size;
    const piece = Buffer.alloc(64 * 1024, 0x61);
    const more = (): void => {
      while (left > 0) {
        const n = Math.min(left, piece.length);
        left -= n;
        if (!res.write(piece.subarray(0, n))) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/check`;

  const fits = await subRequest({ servicePool }, 'default', `${base}?size=${MAX_ANSWER_BYTES}`, 'GET', req, [], 5_000);
  assert.equal(fits.status, 401);
  assert.equal(fits.body.length, MAX_ANSWER_BYTES, 'an answer of exactly the cap is read whole');

  await assert.rejects(subRequest({ servicePool }, 'default', `${base}?size=${MAX_ANSWER_BYTES + 1}`, 'GET', req, [], 5_000), /larger than/);
  await assert.rejects(subRequest({ servicePool }, 'default', `${base}?size=${8 * MAX_ANSWER_BYTES}`, 'GET', req, [], 5_000), /larger than/);
});
