import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

test('a route with inline steps and a route bound to the same chain behave the same on the data port', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const steps = [
    { code: 'method-restriction', settings: { allow: ['GET'] } },
    { code: 'request-headers', settings: { set: { 'x-chain': 'on' } } },
    { code: 'path-rewrite', settings: { regex: { pattern: '^/(inline|bound)', replacement: '/svc' } } },
    { code: 'rate-limit', settings: { requestsPerSecond: 0.01, burst: 2, headers: false } },
  ];
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['orch', 'chain', { nodes: steps.map((s, i) => ({ id: `n${i}`, step: s.code, settings: s.settings })), links: steps.slice(1).map((_, i) => ({ from: `n${i}`, to: `n${i + 1}` })) }],
    ['route', 'inline', { cluster: 'up', pathPrefix: '/inline', steps }],
    ['route', 'bound', { cluster: 'up', pathPrefix: '/bound', steps: [{ code: 'orch', settings: { ref: 'chain' } }] }],
  ]);
  const trace = async (prefix: string) => {
    const out: unknown[] = [];
    out.push((await request(`${gw.dataUrl}${prefix}/x`, { method: 'POST', body: 'x' })).status);
    for (let i = 0; i < 3; i++) {
      const r = await request(`${gw.dataUrl}${prefix}/x?i=${i}`);
      out.push([r.status, r.json?.url, r.json?.headers?.['x-chain']]);
    }
    return out;
  };
  const inline = await trace('/inline');
  const bound = await trace('/bound');
  assert.deepEqual(bound, inline);
  assert.deepEqual(inline, [405, [200, '/svc/x?i=0', 'on'], [200, '/svc/x?i=1', 'on'], [429, undefined, undefined]]);
});
