import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createH2Server } from 'node:http2';
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { H2TargetPool } from '../../src/worker/engine/upstream-h2/h2-target-pool.js';
import { SessionSilentError } from '../../src/worker/engine/upstream-h2/session-liveness.js';
import { targetConnection } from '../../src/shared/upstream-connect.js';
import { UpstreamGuard } from '../../src/shared/upstream-guard.js';
import { recordingHandler } from '../helpers/recording-handler.js';

// A target gone silent (a frozen process, a black-holed route: no FIN, no RST) is found by
// the PINGs a session sends while it carries streams: its streams fail instead of waiting
// forever (a gRPC call has no headers or body timeout).

/** An h2c server that answers the head at once and then never ends the body, behind a TCP relay that can stop relaying. */
async function frozenTarget(t: { after(fn: () => unknown): void }) {
  const h2 = createH2Server();
  h2.on('stream', (s) => {
    s.respond({ ':status': 200 });
    s.write('first');
  });
  await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
  let frozen = false;
  const pairs: Socket[] = [];
  const relay = createServer((client) => {
    const server = connect((h2.address() as AddressInfo).port, '127.0.0.1');
    pairs.push(client, server);
    client.on('data', (d) => void (frozen || server.write(d)));
    server.on('data', (d) => void (frozen || client.write(d)));
    client.on('error', () => {});
    server.on('error', () => {});
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const s of pairs) s.destroy();
    relay.close();
    h2.close();
  });
  return { target: `127.0.0.1:${(relay.address() as AddressInfo).port}`, freeze: () => void (frozen = true) };
}

test('a session whose target stops answering PINGs is closed and its streams fail; a live one keeps its stream', { timeout: 10_000 }, async (t) => {
  const frozenOne = await frozenTarget(t);
  const liveOne = await frozenTarget(t);
  const pools = [frozenOne, liveOne].map(({ target }) => {
    const connection = targetConnection(UpstreamGuard.allowAll(), 'default', target, { connectMs: 2_000, protocol: 'h2c' });
    const pool = new H2TargetPool({ target, connection, connections: 1, idleMs: 4_000, connectMs: 300, pingMs: 200 });
    t.after(() => pool.close());
    return pool;
  });
  const calls = pools.map((pool) => {
    const h = recordingHandler();
    pool.dispatch({ path: '/', method: 'GET', headersTimeout: 0, bodyTimeout: 0 } as Dispatcher.DispatchOptions, h.handler);
    return h;
  });
  await Promise.all(calls.map((c) => c.nextData()));
  frozenOne.freeze();
  const started = performance.now();
  const failed = await calls[0]!.done;
  assert.ok(failed.error instanceof SessionSilentError, String(failed.error));
  const ms = performance.now() - started;
  assert.ok(ms < 1_500, `found out within a PING interval and its answer time (${ms.toFixed(0)} ms)`);
  // The live target answered its PINGs all along: its stream is still open.
  assert.equal(calls[1]!.rec.error, null);
  assert.equal(calls[1]!.rec.trailers, undefined);
});
