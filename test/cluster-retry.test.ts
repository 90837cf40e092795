import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createNetServer } from 'node:net';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { sendMany } from './helpers/load.js';
import { BOUNDED } from './helpers/wait.js';


test('a target resetting every connection: the retry budget holds attempts at it to 1.2x the requests plus the floor', BOUNDED, async (t) => {
  let attempts = 0;
  // Reads a request head, then resets the connection: a failure after bytes went out.
  const resetter = createNetServer((sock) => {
    sock.once('data', () => {
      attempts++;
      sock.resetAndDestroy();
    });
    sock.on('error', () => {});
  });
  await new Promise<void>((r) => resetter.listen(0, '127.0.0.1', r));
  t.after(() => resetter.close());
  const target = `127.0.0.1:${(resetter.address() as AddressInfo).port}`;
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [['cluster', 'c', { targets: [target], retry: { attempts: 3, on: ['reset'], budgetPercent: 20 } }], ['route', 'all', { cluster: 'c' }]]);
  const statuses = await sendMany(gw.dataPort, 300, 8);
  t.diagnostic(`${attempts} attempts for 300 requests (without the budget: up to 900)`);
  assert.ok(statuses.every((s) => s === 502), 'every request failed in the end');
  // 20 % of 300, plus the floor of 1 a second over the 10 s window, plus slack for the window's edges.
  assert.ok(attempts <= 300 * 1.2 + 10 + 5, `${attempts} attempts`);
  assert.ok(attempts > 300, 'some retries happened');
});

test('a cluster retry on 503 goes to another target', BOUNDED, async (t) => {
  let goodHits = 0;
  let badHits = 0;
  const good = createServer((_q, s) => {
    goodHits++;
    s.end('good');
  });
  const bad = createServer((_q, s) => {
    badHits++;
    s.statusCode = 503;
    s.end('bad');
  });
  for (const srv of [good, bad]) {
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    t.after(() => {
      srv.closeAllConnections();
      srv.close();
    });
  }
  const addr = (srv: typeof good) => `127.0.0.1:${(srv.address() as AddressInfo).port}`;
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'c', { targets: [addr(good), addr(bad)], retry: { attempts: 2, on: ['503'], budgetPercent: 100 } }],
    ['route', 'all', { cluster: 'c' }],
  ]);
  const statuses = await sendMany(gw.dataPort, 100, 4);
  t.diagnostic(`good ${goodHits}, bad ${badHits}`);
  assert.ok(statuses.every((s) => s === 200), 'every 503 was retried on the other target');
  assert.ok(badHits > 0);
});

/** A target that never answers (its requests are held until the test ends); counts them. */
async function stuckTarget(t: { after(fn: () => void): void }): Promise<{ address: string; hits: () => number }> {
  const held: import('node:http').ServerResponse[] = [];
  const srv = createServer((_q, s) => void held.push(s));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => {
    srv.closeAllConnections();
    srv.close();
  });
  return { address: `127.0.0.1:${(srv.address() as AddressInfo).port}`, hits: () => held.length };
}

test('perTryTimeoutMs: an attempt at a target that never answers gives up after it and "504" retries on the other target', BOUNDED, async (t) => {
  const stuck = await stuckTarget(t);
  let goodHits = 0;
  const good = createServer((_q, s) => {
    goodHits++;
    s.end('good');
  });
  await new Promise<void>((r) => good.listen(0, '127.0.0.1', r));
  t.after(() => {
    good.closeAllConnections();
    good.close();
  });
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    [
      'cluster',
      'c',
      {
        targets: [stuck.address, `127.0.0.1:${(good.address() as AddressInfo).port}`],
        // headersMs alone would hold each request at the stuck target for an hour.
        timeouts: { headersMs: 3_600_000 },
        retry: { attempts: 2, on: ['504'], perTryTimeoutMs: 150, budgetPercent: 100 },
      },
    ],
    ['route', 'all', { cluster: 'c' }],
  ]);
  const statuses = await sendMany(gw.dataPort, 20, 4);
  t.diagnostic(`stuck ${stuck.hits()}, good ${goodHits}`);
  assert.deepEqual(new Set(statuses), new Set([200]));
  assert.ok(stuck.hits() > 0, 'round robin sent first attempts to the stuck target');
  assert.equal(goodHits, 20);
});

test('perTryTimeoutMs without "504" in on: the attempt ends with 504 Svc.Data.UpstreamTimeout and is not retried', BOUNDED, async (t) => {
  const stuck = await stuckTarget(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'c', { targets: [stuck.address], timeouts: { headersMs: 3_600_000 }, retry: { attempts: 3, on: ['reset'], perTryTimeoutMs: 150, budgetPercent: 100 } }],
    ['route', 'all', { cluster: 'c' }],
  ]);
  const r = await fetch(`http://127.0.0.1:${gw.dataPort}/x`);
  assert.equal(r.status, 504);
  assert.equal(((await r.json()) as { code: string }).code, 'Svc.Data.UpstreamTimeout');
  assert.equal(stuck.hits(), 1);
});
