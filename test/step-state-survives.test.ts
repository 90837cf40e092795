import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { freePort } from './helpers/ports.js';
import { BOUNDED } from './helpers/wait.js';

/**
 * Any tenant's publish rebuilds every route's steps in every worker. Per-route step state
 * (a cache's answers, an open circuit) belongs to the step, not to the generation: another
 * tenant's publish leaves it as it was, a change of the step's own settings starts afresh.
 * One worker: that state is per worker process.
 */
test('tenant B\'s step state survives tenant A\'s publish; B\'s own settings change starts afresh', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const dead = await freePort();
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 1, edit: (c) => void (c.upstreams = { allow: ['127.0.0.0/8'] }) });
  const b = (path: string) => request(`${gw.dataUrl}${path}`, { headers: { host: 'b.test' } });
  const cacheStep = (ttlSeconds: number) => ({ code: 'cache', settings: { ttlSeconds } });
  await apply(gw, [['cluster', 'up', { targets: [up.target] }], ['route', 'site', { cluster: 'up', hosts: ['a.test'] }]], 'alpha');
  await apply(
    gw,
    [
      ['cluster', 'up', { targets: [up.target] }],
      ['cluster', 'down', { targets: [`127.0.0.1:${dead}`] }],
      ['route', 'cached', { cluster: 'up', hosts: ['b.test'], pathPrefix: '/cached', steps: [cacheStep(300)] }],
      ['route', 'breaker', { cluster: 'down', hosts: ['b.test'], pathPrefix: '/breaker', steps: [{ code: 'circuit-breaker', settings: { failures: 2, windowMs: 60_000, openMs: 60_000 } }] }],
    ],
    'beta',
  );
  const upstreamHits = () => up.requests.filter((r) => r.url.startsWith('/cached')).length;

  // B's state before A publishes: a stored answer, an open circuit.
  assert.equal((await b('/cached')).headers['x-cache'], 'MISS');
  assert.equal((await b('/cached')).headers['x-cache'], 'HIT');
  for (let i = 0; i < 2; i++) assert.equal((await b('/breaker')).status, 502);
  const open = await b('/breaker');
  assert.equal(open.json?.code, 'Svc.Data.CircuitOpen', open.text);

  await apply(gw, [['route', 'more', { cluster: 'up', hosts: ['a.test'], pathPrefix: '/more' }]], 'alpha');

  await t.test('cache: HIT right after another tenant\'s publish', async () => {
    // Regression: every generation built a new store, so any tenant's publish emptied every route's cache.
    const r = await b('/cached');
    assert.equal(r.headers['x-cache'], 'HIT');
    assert.equal(upstreamHits(), 1, 'the upstream was asked once, before the publishes');
  });

  await t.test('circuit-breaker: still open after another tenant\'s publish', async () => {
    const r = await b('/breaker');
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.code, 'Svc.Data.CircuitOpen');
  });

  await t.test('a change of B\'s own step settings starts that step afresh; B\'s other steps keep theirs', async () => {
    await apply(gw, [['route', 'cached', { cluster: 'up', hosts: ['b.test'], pathPrefix: '/cached', steps: [cacheStep(301)] }]], 'beta');
    assert.equal((await b('/cached')).headers['x-cache'], 'MISS', 'new settings: an empty cache');
    assert.equal(upstreamHits(), 2);
    assert.equal((await b('/cached')).headers['x-cache'], 'HIT');
    assert.equal((await b('/breaker')).json?.code, 'Svc.Data.CircuitOpen', 'B\'s own publish left the unchanged breaker open');
  });
});
