import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, exitWithin } from './helpers/gateway.js';
import { ROOT_KEY, apply, clusterStatus } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { BOUNDED, sleep } from './helpers/wait.js';

/**
 * A one-worker gateway proxying to a test upstream, and a request to it the upstream
 * holds for `ms`: resolves with its status, or the error's message.
 */
async function gatewayWithSlowRequest(t: TestContext, drainGraceMs: number, ms: number) {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { workers: 1, drainGraceMs, keys: [ROOT_KEY] });
  await apply(gw, [['cluster', 'c', { targets: [up.target] }], ['route', 'r', { cluster: 'c' }]]);
  const inflight = request(`${gw.dataUrl}/slow`, { headers: { 'x-up-delay-ms': String(ms) }, timeoutMs: 30_000 }).then(
    (r) => `${r.status}`,
    (e: Error) => `error: ${e.message}`,
  );
  return { gw, inflight };
}

// Each test has a gateway of its own and spends its time waiting on drains and held
// requests, not on the CPU: they run side by side.
describe('drain on signals', { concurrency: true }, () => {
  test('a second SIGTERM during the drain changes nothing: the in-flight request finishes and the exit is 0', BOUNDED, async (t) => {
    // Regression: the handlers were `once`: the second signal killed the supervisor by
    // signal (exit 143, volume not closed) and the workers cut the request.
    const { gw, inflight } = await gatewayWithSlowRequest(t, 10_000, 2_000);
    await sleep(300);
    process.kill(gw.pid, 'SIGTERM');
    await sleep(300);
    process.kill(gw.pid, 'SIGTERM');
    assert.equal(await inflight, '200');
    const exit = await exitWithin(gw, 15_000);
    assert.deepEqual([exit.code, exit.signal], [0, null], gw.stderr());
  });

  test('SIGTERM to the whole process group drains with drain.graceMs, not a fixed 10 s', BOUNDED, async (t) => {
    // Regression: workers that got the signal themselves (systemd KillMode=control-group,
    // kill -TERM -<pgid>) drained with 10 s whatever the config said: a 12 s request
    // under a 15 s grace period was cut.
    const { gw, inflight } = await gatewayWithSlowRequest(t, 15_000, 12_000);
    await sleep(500);
    process.kill(-gw.pid, 'SIGTERM');
    assert.equal(await inflight, '200', 'finished within the 15 s grace period');
    assert.equal((await exitWithin(gw, 20_000)).code, 0);
  });

  test('SIGTERM while a crashed worker is being replaced: the replacement never listens, and the stop is prompt', BOUNDED, async (t) => {
    // Regression: the replacement, still loading, lost the drain message, then got `init`,
    // listened, and took new connections for the whole grace period.
    const gw = await startGateway(t, { workers: 1, drainGraceMs: 5_000, keys: [ROOT_KEY] });
    await apply(gw, [['route', 'r', { directResponse: { statusCode: 200, body: 'ok' } }]]);
    process.kill((await clusterStatus(gw)).workers[0]!.pid!, 'SIGKILL');
    await sleep(60); // the replacement is forked and still loading its modules
    const t0 = Date.now();
    process.kill(gw.pid, 'SIGTERM');
    const exit = exitWithin(gw, 15_000);
    let over = false;
    void exit.then(() => (over = true));
    const answered: string[] = [];
    while (!over) {
      const r = await request(`${gw.dataUrl}/`, { timeoutMs: 500 }).then((x) => `${Date.now() - t0} ms: ${x.status}`, () => null);
      if (r) answered.push(r);
      await sleep(200);
    }
    assert.equal((await exit).code, 0);
    assert.deepEqual(answered, [], 'nothing accepted new connections after SIGTERM');
    assert.ok(Date.now() - t0 < 3_000, `stopped after ${Date.now() - t0} ms with nothing in flight`);
  });
});
