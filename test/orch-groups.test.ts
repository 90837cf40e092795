import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';
import { startService } from './helpers/service.js';

const KEY = { id: 'key', step: 'key-auth', settings: { query: 'api_key', keys: [{ id: 'mine', sha256: createHash('sha256').update('MINE').digest('hex') }] } };
const PARAMS = { id: 'params', step: 'query-params', settings: { set: { v: '2' }, remove: ['debug'] } };

const service = (t: { after(fn: () => unknown): void }, delayMs: number, status: number, body: unknown) => startService(t, { delayMs, status, body });

test('parallel groups run their members concurrently and merge by all, any or first', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const slowA = await service(t, 400, 200, { tier: 'gold' });
  const slowB = await service(t, 400, 200, { region: 'eu' });
  const deny = await service(t, 50, 401, { code: 'nope' });
  const allow = await service(t, 300, 200, {});
  const fast = await service(t, 50, 200, { who: 'fast' });
  const callout = (id: string, url: string, header: string, pointer: string) => ({ id, step: 'http-callout', settings: { url, map: { [header]: pointer } } });
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['orch', 'all', { nodes: [callout('a', slowA, 'x-tier', '/tier'), callout('b', slowB, 'x-region', '/region')], links: [], groups: [{ id: 'g', nodes: ['a', 'b'], merge: 'all' }] }],
    ['orch', 'seq', { nodes: [callout('a', slowA, 'x-tier', '/tier'), callout('b', slowB, 'x-region', '/region')], links: [{ from: 'a', to: 'b' }] }],
    ['orch', 'order', { nodes: [callout('slow', slowA, 'x-who', '/tier'), callout('quick', fast, 'x-who', '/who')], links: [], groups: [{ id: 'g', nodes: ['slow', 'quick'], merge: 'all' }] }],
    ['orch', 'any', { nodes: [{ id: 'd', step: 'forward-auth', settings: { url: deny, upstreamHeaders: ['x-user-id'] } }, { id: 'ok', step: 'forward-auth', settings: { url: allow, upstreamHeaders: ['x-user-id'] } }], links: [], groups: [{ id: 'g', nodes: ['d', 'ok'], merge: 'any' }] }],
    ['orch', 'anyfail', { nodes: [{ id: 'd1', step: 'forward-auth', settings: { url: deny } }, { id: 'd2', step: 'forward-auth', settings: { url: deny } }], links: [], groups: [{ id: 'g', nodes: ['d1', 'd2'], merge: 'any' }] }],
    ['orch', 'first', { nodes: [callout('s', slowA, 'x-tier', '/tier'), callout('f', fast, 'x-who', '/who')], links: [], groups: [{ id: 'g', nodes: ['s', 'f'], merge: 'first' }] }],
    ['orch', 'keyfirst', { nodes: [KEY, PARAMS], links: [], groups: [{ id: 'g', nodes: ['key', 'params'], merge: 'all' }] }],
    ['orch', 'paramsfirst', { nodes: [PARAMS, KEY], links: [], groups: [{ id: 'g', nodes: ['params', 'key'], merge: 'all' }] }],
    ['route', 'keyfirst', { cluster: 'up', pathPrefix: '/keyfirst', steps: [{ code: 'orch', settings: { ref: 'keyfirst' } }] }],
    ['route', 'paramsfirst', { cluster: 'up', pathPrefix: '/paramsfirst', steps: [{ code: 'orch', settings: { ref: 'paramsfirst' } }] }],
    ['route', 'all', { cluster: 'up', pathPrefix: '/all', steps: [{ code: 'orch', settings: { ref: 'all' } }] }],
    ['route', 'seq', { cluster: 'up', pathPrefix: '/seq', steps: [{ code: 'orch', settings: { ref: 'seq' } }] }],
    ['route', 'order', { cluster: 'up', pathPrefix: '/order', steps: [{ code: 'orch', settings: { ref: 'order' } }] }],
    ['route', 'any', { cluster: 'up', pathPrefix: '/any', steps: [{ code: 'orch', settings: { ref: 'any' } }] }],
    ['route', 'anyfail', { cluster: 'up', pathPrefix: '/anyfail', steps: [{ code: 'orch', settings: { ref: 'anyfail' } }] }],
    ['route', 'first', { cluster: 'up', pathPrefix: '/first', steps: [{ code: 'orch', settings: { ref: 'first' } }] }],
  ]);
  const timed = async (path: string) => {
    const t0 = Date.now();
    const r = await request(`${gw.dataUrl}${path}`);
    return { r, ms: Date.now() - t0 };
  };
  await timed('/all'); // warm the connections to the services
  await timed('/seq');

  // Elapsed times are compared within this run (the machine may be loaded), not to fixed limits.
  let allMs = 0;
  await t.test('all: two 400 ms callouts take far less than the same two run in turn; both mappings applied', async () => {
    const seq = await timed('/seq');
    const { r, ms } = await timed('/all');
    allMs = ms;
    assert.equal(r.status, 200);
    assert.equal(r.json.headers['x-tier'], 'gold');
    assert.equal(r.json.headers['x-region'], 'eu');
    assert.ok(seq.ms >= 800, `the sequential chain took ${seq.ms} ms`);
    assert.ok(ms < seq.ms - 250, `group ${ms} ms vs in turn ${seq.ms} ms`);
  });

  await t.test('all: the members’ changes apply in node order, not in the order they finished', async () => {
    const { r } = await timed('/order');
    assert.equal(r.status, 200);
    assert.equal(r.json.headers['x-who'], 'fast', 'the later node (quick) sets the header last, although it finished first');
  });

  await t.test('all: members’ query edits compose in either node order (the key key-auth strips stays stripped)', async () => {
    // Regression: each member's whole query overwrote the last, so query-params (built on
    // the query before the group) put back the key key-auth had removed, or key-auth's
    // query dropped query-params' edits.
    for (const path of ['/keyfirst', '/paramsfirst']) {
      const { r } = await timed(`${path}?page=3&api_key=MINE&debug=1`);
      assert.equal(r.status, 200, path);
      assert.equal(r.json.url, `${path}?page=3&v=2`, path);
    }
  });

  await t.test('any: one member denying is enough to be outvoted by one allowing', async () => {
    const { r } = await timed('/any');
    assert.equal(r.status, 200);
    const { r: no } = await timed('/anyfail');
    assert.equal(no.status, 401, 'when every member fails, the first failure is returned');
  });

  await t.test('first: the first member to finish decides', async () => {
    const { r, ms } = await timed('/first');
    assert.equal(r.status, 200);
    assert.equal(r.json.headers['x-who'], 'fast');
    assert.ok(ms < allMs - 200, `first ${ms} ms vs all ${allMs} ms`);
  });
});
