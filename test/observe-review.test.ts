import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { BOUNDED, sleep } from './helpers/wait.js';

/** The value of switchyard_requests_total summed over the series whose labels include `labels`. */
async function requestsTotal(gw: Gateway, labels: Record<string, string>): Promise<number> {
  const r = await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root });
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return r.text
    .split('\n')
    .filter((l) => l.startsWith('switchyard_requests_total{') && want.every((w) => l.includes(w)))
    .reduce((s, l) => s + Number(l.split(' ').at(-1)), 0);
}

/** Rides out one shipment (workers ship their counts each second). */
const shipped = () => sleep(1_400);

test('a rate-limit 429 envelope carries the request id the client got as its traceId', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'limited', { pathPrefix: '/l', cluster: 'api', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 0.001, burst: 1 } }] }],
  ]);
  assert.equal((await request(`${gw.dataUrl}/l/1`)).status, 200);
  const refused = await request(`${gw.dataUrl}/l/2`);
  assert.equal(refused.status, 429);
  assert.ok(refused.headers['x-request-id'], 'the answer carries an id');
  assert.equal(refused.json.traceId, refused.headers['x-request-id'], 'the envelope names the id the client got');
});

test('a directResponse too large for one cork is counted under its route', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['route', 'small', { pathPrefix: '/small', directResponse: { statusCode: 200, body: 'hi' } }],
    ['route', 'big', { pathPrefix: '/big', directResponse: { statusCode: 200, body: 'x'.repeat(60_000) } }],
  ]);
  for (let i = 0; i < 3; i++) assert.equal((await request(`${gw.dataUrl}/small`)).status, 200);
  for (let i = 0; i < 4; i++) assert.equal((await request(`${gw.dataUrl}/big`)).text.length, 60_000);
  await shipped();
  assert.equal(await requestsTotal(gw, { route: 'small' }), 3);
  assert.equal(await requestsTotal(gw, { route: 'big' }), 4, 'the large answers are the route\'s');
  assert.equal(await requestsTotal(gw, { route: '' }), 0, 'none is counted as a request no route took');
});

test('the upstream gets exactly one request id header, the one the client got, whatever a route\'s header edits add', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'added', { pathPrefix: '/added', cluster: 'api', steps: [{ code: 'request-headers', settings: { add: { 'x-request-id': 'from-step' } } }] }],
    ['route', 'set', { pathPrefix: '/set', cluster: 'api', steps: [{ code: 'request-headers', settings: { set: { 'X-Request-Id': 'from-step' } } }] }],
  ]);
  for (const path of ['/added/1', '/set/1']) {
    const r = await request(`${gw.dataUrl}${path}`, { headers: { 'x-request-id': 'client' } });
    assert.equal(r.status, 200);
    const raw = r.json.rawHeaders as string[];
    const ids = raw.filter((_, i) => i % 2 === 1 && raw[i - 1]!.toLowerCase() === 'x-request-id');
    assert.deepEqual(ids, [r.headers['x-request-id']], `${path}: one header upstream, the client's id`);
  }
});
