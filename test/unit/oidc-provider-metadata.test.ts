import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProviderMetadata } from '../../src/steps/identity/provider-metadata.js';

test('provider metadata: fetched once, kept for its TTL, refreshed in the background, failures retried only after a pause', async () => {
  let now = 0;
  let calls = 0;
  let fail = false;
  const m = new ProviderMetadata<string>(
    async () => {
      calls++;
      if (fail) throw new Error('down');
      return `doc-${calls}`;
    },
    1_000,
    100,
    () => now,
  );
  // Concurrent first asks share one fetch.
  assert.deepEqual(await Promise.all([m.get(), m.get()]), ['doc-1', 'doc-1']);
  assert.equal(calls, 1);
  now = 999;
  assert.equal(await m.get(), 'doc-1');
  assert.equal(calls, 1);
  // Past the TTL the kept document answers while the next one is fetched.
  now = 1_000;
  fail = true;
  assert.equal(await m.get(), 'doc-1');
  assert.equal(calls, 2);
  await Promise.resolve();
  now = 1_050; // the failed refresh is not retried within 100 ms
  assert.equal(await m.get(), 'doc-1');
  assert.equal(calls, 2);
  now = 1_200;
  fail = false;
  assert.equal(await m.get(), 'doc-1');
  assert.equal(calls, 3);
  await new Promise((r) => setImmediate(r));
  assert.equal(await m.get(), 'doc-3');
});

test('provider metadata: with nothing kept, a failure rejects, and the next ask within the pause fails without a call', async () => {
  let now = 0;
  let calls = 0;
  const m = new ProviderMetadata<string>(
    async () => {
      calls++;
      throw new Error('unreachable');
    },
    1_000,
    5_000,
    () => now,
  );
  await assert.rejects(m.get(), /unreachable/);
  now = 10;
  await assert.rejects(m.get(), /could not be reached/);
  assert.equal(calls, 1);
  now = 5_000;
  await assert.rejects(m.get(), /unreachable/);
  assert.equal(calls, 2);
});
