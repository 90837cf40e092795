import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, tempDir, newToken, type GatewayOptions } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus, deleteEntity, getEntity, getEntityRaw, history, listEntities, publish, setEntity } from './helpers/admin.js';
import { freePorts } from './helpers/ports.js';
import { BOUNDED } from './helpers/wait.js';

const ping = (body: string) => ({ pathPrefix: '/ping', directResponse: { statusCode: 200, body } });

test('on a virtual:// volume a restart serves the last generation at once, with no publish, and drafts survive', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const dir = tempDir(t);
  const [dataPort, adminPort] = await freePorts(2);
  // The same worker.json both times: same folder, ports and key.
  const opts: GatewayOptions = { dir, dataPort, adminPort, workers: 2, volume: 'virtual://state.db', keys: [{ ...ROOT_KEY, token: newToken() }] };

  const gw1 = await startGateway(t, opts);
  assert.match(gw1.readyLine, / generation=0$/);
  await apply(gw1, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'api', { pathPrefix: '/api', cluster: 'api' }],
    ['route', 'ping', ping('v1')],
    ['route', 'gone', { pathPrefix: '/gone', directResponse: { statusCode: 200, body: 'gone' } }],
  ]);
  await setEntity(gw1, 'route', 'ping', ping('v2'));
  assert.equal((await publish(gw1)).generation, 2);
  // A draft written after the last publish, and a staged delete.
  await setEntity(gw1, 'route', 'ping', ping('v3-draft'));
  await setEntity(gw1, 'route', 'new', { pathPrefix: '/new', directResponse: { statusCode: 200, body: 'new' } });
  await deleteEntity(gw1, 'route', 'gone');
  assert.equal((await request(`${gw1.dataUrl}/ping`)).text, 'v2');

  const stopped = await gw1.stop('SIGTERM');
  assert.equal(stopped.code, 0, `clean stop: ${JSON.stringify(stopped)}`);

  const gw2 = await startGateway(t, opts);
  assert.match(gw2.readyLine, / workers=2 generation=2$/, 'the ready line names the restored generation');
  // The very first requests, before any admin call: generation 2 serves.
  const first = await request(`${gw2.dataUrl}/ping`);
  assert.equal(`${first.status} ${first.text}`, '200 v2', 'served at once, no publish');
  for (let i = 0; i < 6; i++) {
    assert.equal((await request(`${gw2.dataUrl}/ping`)).text, 'v2', `request ${i} (every worker)`);
    const api = await request(`${gw2.dataUrl}/api/after-restart?i=${i}`);
    assert.equal(api.status, 200, api.text);
    assert.equal(api.json.url, `/api/after-restart?i=${i}`);
    assert.equal((await request(`${gw2.dataUrl}/new`)).status, 404, 'the draft route does not serve');
    assert.equal((await request(`${gw2.dataUrl}/gone`)).text, 'gone', 'the staged delete is not applied');
  }
  const st = await clusterStatus(gw2);
  assert.equal(st.generation, 2);
  assert.equal(st.volume, 'virtual');
  for (const w of st.workers) assert.equal(w.generation, 2, `worker ${w.slot} at generation 2`);

  // Drafts are still drafts, beside their published versions.
  const p = await getEntity(gw2, 'route', 'ping');
  assert.equal(p.state, 'draft');
  assert.deepEqual(p.draft?.doc, ping('v3-draft'));
  assert.deepEqual(p.published, { doc: ping('v2'), generation: 2 });
  const n = await getEntity(gw2, 'route', 'new');
  assert.equal(n.state, 'draft');
  assert.equal(n.published, null);
  const g = await getEntity(gw2, 'route', 'gone');
  assert.equal(g.pending, 'delete');
  assert.equal(g.published?.generation, 1);
  const h = await history(gw2);
  assert.equal(h.current, 2);
  assert.deepEqual(h.items.map((i) => i.generation).sort(), [1, 2]);

  // Publishing continues the numbering and serves the surviving drafts.
  const p3 = await publish(gw2);
  assert.deepEqual(p3, { ok: true, generation: 3, planned: ['route/gone', 'route/new', 'route/ping'], warnings: [] });
  assert.equal((await request(`${gw2.dataUrl}/gone`)).status, 404);
  assert.equal((await request(`${gw2.dataUrl}/ping`)).text, 'v3-draft');
  assert.equal((await request(`${gw2.dataUrl}/new`)).text, 'new');
});

test('on a memory: volume a restart forgets everything: 503 before a publish, generation 0, no entities', BOUNDED, async (t) => {
  const dir = tempDir(t);
  const [dataPort, adminPort] = await freePorts(2);
  const opts: GatewayOptions = { dir, dataPort, adminPort, volume: 'memory:', keys: [{ ...ROOT_KEY, token: newToken() }] };

  const gw1 = await startGateway(t, opts);
  await apply(gw1, [['route', 'ping', ping('v1')]]);
  await setEntity(gw1, 'route', 'draft-only', ping('d'));
  assert.equal((await request(`${gw1.dataUrl}/ping`)).text, 'v1');
  assert.equal((await gw1.stop('SIGTERM')).code, 0);

  const gw2 = await startGateway(t, opts);
  assert.match(gw2.readyLine, / generation=0$/);
  const r = await request(`${gw2.dataUrl}/ping`);
  assert.equal(r.status, 503, r.text);
  assert.equal(r.json?.code, 'Svc.Data.NotPublished');
  assert.equal((await clusterStatus(gw2)).generation, 0);
  assert.deepEqual((await listEntities(gw2, 'route')).items, []);
  assert.equal((await getEntityRaw(gw2, 'route', 'ping')).status, 404);
  assert.deepEqual((await history(gw2)).items, []);
});

test('a restart without a step’s secret: the other routes serve, that route answers 503 RouteUnavailable, and a publish can fix it', BOUNDED, async (t) => {
  // Regression: the stored generation was built unchecked at boot; jwt-auth's unset
  // secretEnv threw in every worker, and the gateway exited 10 with every route down.
  const up = await startUpstream(t);
  const dir = tempDir(t);
  const [dataPort, adminPort] = await freePorts(2);
  const opts: GatewayOptions = {
    ...{ dir, dataPort, adminPort, volume: 'virtual://state.db', keys: [{ ...ROOT_KEY, token: newToken() }] },
    edit: (c) => (c.secrets = { env: { default: ['SY_TEST_RESTART_SECRET'] } }),
  };
  const jwt = { cluster: 'api', pathPrefix: '/secure', steps: [{ code: 'jwt-auth', settings: { algorithms: ['HS256'], secretEnv: 'SY_TEST_RESTART_SECRET' } }] };
  const gw1 = await startGateway(t, { ...opts, env: { SY_TEST_RESTART_SECRET: 'x'.repeat(40) } });
  await apply(gw1, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'secure', jwt],
    ['route', 'ping', ping('v1')],
  ]);
  assert.equal((await request(`${gw1.dataUrl}/secure`)).status, 401, 'the route works while the secret is set');
  assert.equal((await gw1.stop('SIGTERM')).code, 0);

  const gw2 = await startGateway(t, { ...opts, env: { SY_TEST_RESTART_SECRET: undefined } });
  assert.match(gw2.readyLine, / generation=1$/);
  assert.equal((await request(`${gw2.dataUrl}/ping`)).text, 'v1', 'the other routes serve');
  const down = await request(`${gw2.dataUrl}/secure`);
  assert.equal(down.status, 503, down.text);
  assert.equal(down.json.code, 'Svc.Data.RouteUnavailable');
  assert.ok(gw2.logLines().some((l) => l.route === 'secure' && /cannot be loaded/.test(l.msg) && /SY_TEST_RESTART_SECRET/.test(JSON.stringify(l.err))), 'the log says which route and why');
  // The admin port works: a publish that drops the step restores the route.
  await apply(gw2, [['route', 'secure', { cluster: 'api', pathPrefix: '/secure' }]]);
  assert.equal((await request(`${gw2.dataUrl}/secure`)).status, 200);
});
