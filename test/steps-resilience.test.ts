import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, dryRun, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { freePort } from './helpers/ports.js';
import { BOUNDED, sleep } from './helpers/wait.js';

test('traffic-split and circuit-breaker', BOUNDED, async (t) => {
  const v1 = await startUpstream(t);
  const v2 = await startUpstream(t);
  const dead = await freePort();
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'v1', { targets: [v1.target] }],
    ['cluster', 'v2', { targets: [v2.target] }],
    ['cluster', 'down', { targets: [`127.0.0.1:${dead}`] }],
    ['route', 'split', { cluster: 'v1', pathPrefix: '/split', steps: [{ code: 'traffic-split', settings: { clusters: [{ cluster: 'v1', weight: 1 }, { cluster: 'v2', weight: 1 }] } }] }],
    ['route', 'canary', { cluster: 'v1', pathPrefix: '/canary', steps: [{ code: 'traffic-split', settings: { clusters: [{ cluster: 'v1', weight: 0 }, { cluster: 'v2', weight: 5 }] } }] }],
    ['route', 'sticky', { cluster: 'v1', pathPrefix: '/sticky', steps: [{ code: 'traffic-split', settings: { clusters: [{ cluster: 'v1', weight: 1 }, { cluster: 'v2', weight: 1 }], stickyHeader: 'x-user' } }] }],
    ['route', 'cb', { cluster: 'down', pathPrefix: '/cb', steps: [{ code: 'circuit-breaker', settings: { failures: 3, windowMs: 10000, openMs: 800 } }] }],
  ]);
  const get = (p: string, headers: Record<string, string> = {}) => request(`${gw.dataUrl}${p}`, { headers });

  await t.test('weights choose the cluster; weight 0 never receives traffic; sticky values stay on one cluster', async () => {
    const before = [v1.requests.length, v2.requests.length];
    for (let i = 0; i < 40; i++) assert.equal((await get('/split')).status, 200);
    const got = [v1.requests.length - before[0]!, v2.requests.length - before[1]!];
    assert.equal(got[0]! + got[1]!, 40);
    assert.ok(got[0]! > 5 && got[1]! > 5, `both clusters served: ${got}`);
    const v1Before = v1.requests.length;
    for (let i = 0; i < 10; i++) await get('/canary');
    assert.equal(v1.requests.length, v1Before, 'weight 0 gets nothing');
    const sticky = async () => {
      const a = v1.requests.length;
      await get('/sticky', { 'x-user': 'user-123' });
      return v1.requests.length > a ? 'v1' : 'v2';
    };
    const first = await sticky();
    for (let i = 0; i < 8; i++) assert.equal(await sticky(), first);
  });

  await t.test('a traffic-split naming a missing cluster is a compile issue', async () => {
    await setEntity(gw, 'route', 'bad', { cluster: 'v1', pathPrefix: '/bad', steps: [{ code: 'traffic-split', settings: { clusters: [{ cluster: 'nope', weight: 1 }] } }] });
    const d = await dryRun(gw);
    assert.equal(d.status, 422);
    assert.deepEqual(d.json.issues.map((i) => [i.pointer, i.code]), [['/steps/0/settings/clusters/0/cluster', 'Compile.Step.Cluster']]);
  });

  await t.test('circuit-breaker: opens after 3 failures (503 at once), half-opens after openMs and probes', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await get('/cb')).status, 502);
    const open = await get('/cb');
    assert.equal(open.status, 503);
    assert.equal(open.json.code, 'Svc.Data.CircuitOpen');
    assert.ok(Number(open.headers['retry-after']) >= 1);
    await sleep(900);
    assert.equal((await get('/cb')).status, 502, 'the half-open probe reaches the (still dead) upstream');
    assert.equal((await get('/cb')).status, 503, 'the failed probe opened the circuit again');
  });
});

test('retry: idempotent requests are retried on chosen statuses and connection errors, bodies are not', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const dead = await freePort();
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  let failuresLeft = 0;
  up.handler = (req, res) => {
    if (req.url?.startsWith('/flaky') && failuresLeft > 0) {
      failuresLeft--;
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('try again');
      return true;
    }
    return false;
  };
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['cluster', 'halfdead', { targets: [`127.0.0.1:${dead}`, up.target] }],
    ['route', 'flaky', { cluster: 'up', pathPrefix: '/flaky', steps: [{ code: 'retry', settings: { attempts: 3, backoffMs: 10 } }] }],
    ['route', 'half', { cluster: 'halfdead', pathPrefix: '/half', steps: [{ code: 'retry', settings: { attempts: 2, backoffMs: 10 } }] }],
  ]);
  const get = (p: string, opts: Parameters<typeof request>[1] = {}) => request(`${gw.dataUrl}${p}`, opts);

  failuresLeft = 2;
  const ok = await get('/flaky');
  assert.equal(ok.status, 200, 'two 503s, then the third attempt answers');
  assert.equal(failuresLeft, 0);
  failuresLeft = 5;
  const exhausted = await get('/flaky');
  assert.equal(exhausted.status, 503, 'after 3 attempts the last answer goes to the client');
  assert.equal(exhausted.text, 'try again');
  failuresLeft = 1;
  assert.equal((await get('/flaky', { method: 'POST', body: 'x' })).status, 503, 'POST is not retried');
  failuresLeft = 0;
  for (let i = 0; i < 6; i++) assert.equal((await get('/half')).status, 200, 'a refused connection is retried on the next target');
});
