import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

test('rate-limit keyed by a header keeps one bucket per value and reports RateLimit-* headers', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'per-user', { cluster: 'up', pathPrefix: '/u', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 0.01, burst: 2, key: { header: 'x-user' } } }] }],
    ['route', 'per-ip', { cluster: 'up', pathPrefix: '/ip', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 0.01, burst: 1, key: 'ip', headers: false } }] }],
  ]);
  const as = (user: string) => request(`${gw.dataUrl}/u`, { headers: { 'x-user': user } });
  const a1 = await as('alice');
  assert.equal(a1.status, 200);
  assert.equal(a1.headers['ratelimit-limit'], '2');
  assert.equal((await as('alice')).status, 200);
  const a3 = await as('alice');
  assert.equal(a3.status, 429);
  assert.equal(a3.headers['ratelimit-remaining'], '0');
  assert.ok(Number(a3.headers['retry-after']) >= 1);
  assert.equal((await as('bob')).status, 200, "another header value has its own bucket");

  const ip1 = await request(`${gw.dataUrl}/ip`);
  assert.equal(ip1.status, 200);
  assert.equal(ip1.headers['ratelimit-limit'], undefined, 'headers: false');
  assert.equal((await request(`${gw.dataUrl}/ip`, { headers: { 'x-forwarded-for': '9.9.9.9' } })).status, 429, 'the key is the socket peer, not a header the client sets');
});
