import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED, sleep } from './helpers/wait.js';

test('a client that leaves while its POST waits on an async step takes nobody else down', BOUNDED, async (t) => {
  // Regression: the request body stream was destroyed with an error nobody listened to
  // yet (no reader before the step ends), so Node threw it and the worker died, cutting
  // every other request on it. The same happened to a POST waiting for an upstream connection.
  const up = await startUpstream(t);
  const gw = await startGateway(t, { workers: 1, keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'slow', { cluster: 'up', steps: [{ code: 'fault-injection', settings: { delay: { percent: 100, ms: 1_500 } } }] }],
  ]);
  const [before] = (await clusterStatus(gw)).workers;
  const bystander = request(`${gw.dataUrl}/other`, { timeoutMs: 10_000 });
  for (let i = 0; i < 3; i++) {
    const s = connect(gw.dataPort, '127.0.0.1', () => s.write('POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello'));
    s.on('error', () => {});
    await sleep(200);
    s.destroy(); // gone while the delay runs
  }
  const r = await bystander;
  assert.equal(r.status, 200, r.text);
  await sleep(300);
  const after = (await clusterStatus(gw)).workers;
  assert.deepEqual(after.map((w) => [w.pid, w.restarts]), [[before!.pid, before!.restarts]], 'the worker never died');
});
