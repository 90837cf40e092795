import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { freePort } from './helpers/ports.js';
import { BOUNDED } from './helpers/wait.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A GET whose connection is cut after `ms`. */
function abortAfter(url: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { agent: false });
    req.on('error', () => resolve());
    req.on('response', (r) => r.resume());
    req.end();
    setTimeout(() => {
      req.destroy();
      resolve();
    }, ms);
  });
}

/**
 * concurrency-limit and circuit-breaker keep per-route state: it must outlive a publish
 * that leaves the step unchanged, and a client that leaves must give its slot back at once.
 */
test('step state survives unrelated publishes; a client that leaves frees its slot at once', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const dead = await freePort();
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['cluster', 'down', { targets: [`127.0.0.1:${dead}`] }],
    ['route', 'cl', { cluster: 'up', pathPrefix: '/cl', steps: [{ code: 'concurrency-limit', settings: { max: 1 } }] }],
    ['route', 'cldelay', { cluster: 'up', pathPrefix: '/cldelay', steps: [
      { code: 'concurrency-limit', settings: { max: 1 } },
      { code: 'fault-injection', settings: { delay: { percent: 100, ms: 4000 } } },
    ] }],
    ['route', 'cb', { cluster: 'down', pathPrefix: '/cb', steps: [{ code: 'circuit-breaker', settings: { failures: 2, windowMs: 10_000, openMs: 60_000 } }] }],
  ]);

  await t.test('concurrency-limit: a client gone during a later step’s wait frees its slot at once', async () => {
    // Regression: the slot was held until the 4 s delay ended: 503 for everyone meanwhile.
    await abortAfter(`${gw.dataUrl}/cldelay`, 200);
    await sleep(200);
    const started = Date.now();
    const r = request(`${gw.dataUrl}/cldelay`, { timeoutMs: 10_000 });
    await sleep(300);
    const third = await request(`${gw.dataUrl}/cldelay`);
    assert.equal(third.status, 503, 'the second request holds the one slot');
    assert.equal((await r).status, 200, `the second request was admitted (after ${Date.now() - started} ms)`);
  });

  await t.test('concurrency-limit: an unrelated publish does not forget the requests in flight', async () => {
    // Regression: the count restarted at 0 on every publish; max 1 admitted a second request.
    const slow = request(`${gw.dataUrl}/cl`, { headers: { 'x-up-delay-ms': '3000' }, timeoutMs: 10_000 });
    await sleep(300);
    assert.equal((await request(`${gw.dataUrl}/cl`)).status, 503, 'full before the publish');
    await apply(gw, [['route', 'unrelated', { cluster: 'up', pathPrefix: '/unrelated' }]]);
    assert.equal((await request(`${gw.dataUrl}/cl`)).status, 503, 'still full after it');
    assert.equal((await slow).status, 200);
    assert.equal((await request(`${gw.dataUrl}/cl`)).status, 200, 'free again once the slow one ended');
  });

  await t.test('circuit-breaker: an unrelated publish does not close an open circuit', async () => {
    // Regression: right after any publish the circuit was closed again and traffic went to the dead upstream.
    for (let i = 0; i < 2; i++) assert.equal((await request(`${gw.dataUrl}/cb`)).status, 502);
    assert.equal((await request(`${gw.dataUrl}/cb`)).status, 503, 'open for 60 s');
    await apply(gw, [['route', 'unrelated2', { cluster: 'up', pathPrefix: '/unrelated2' }]]);
    const r = await request(`${gw.dataUrl}/cb`);
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.code, 'Svc.Data.CircuitOpen');
  });
});
