import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newToken, startGateway, tempDir, type GatewayOptions } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { freePorts } from './helpers/ports.js';
import { versionedPackage } from './helpers/versioned-package.js';
import { BOUNDED } from './helpers/wait.js';

test('a step package upgraded while the node is down: at start the stored generation takes the new build; a build that refuses it leaves its routes 503', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const pkg = versionedPackage(t);
  const [dataPort, adminPort] = await freePorts(2);
  const opts: GatewayOptions = {
    dir: tempDir(t),
    dataPort,
    adminPort,
    workers: 1,
    volume: 'virtual://state.db',
    keys: [{ ...ROOT_KEY, token: newToken() }],
    edit: (c) => void (c.steps = { packages: [pkg.dir] }),
  };
  let gw = await startGateway(t, opts);
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'api', { pathPrefix: '/api', cluster: 'api', steps: [{ code: 'stamp-build' }] }],
    ['route', 'ping', { pathPrefix: '/ping', directResponse: { statusCode: 200, body: 'pong' } }],
  ]);
  assert.equal((await request(`${gw.dataUrl}/api/x`)).headers['x-step-build'], 'v1');
  await gw.stop();

  pkg.write(2);
  gw = await startGateway(t, opts);
  const upgraded = await request(`${gw.dataUrl}/api/x`);
  assert.equal(upgraded.status, 200, upgraded.text);
  assert.equal(upgraded.headers['x-step-build'], 'v2', 'the stored generation runs on the build loaded at start');
  assert.ok(gw.logLines().some((l) => (l as { msg?: string }).msg?.startsWith('the served generation is stamped with the step packages loaded now')));
  await gw.stop();

  pkg.write(3, true);
  gw = await startGateway(t, opts);
  const refused = await request(`${gw.dataUrl}/api/x`);
  assert.equal(refused.status, 503, refused.text);
  assert.equal(refused.json.code, 'Svc.Data.RouteUnavailable');
  assert.equal((await request(`${gw.dataUrl}/ping`)).status, 200, 'the other routes serve');
  assert.ok(gw.logLines().some((l) => (l as { msg?: string }).msg?.startsWith('the step packages loaded now refuse the published configuration')));
});
