import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway, newToken, tempDir, type GatewayOptions } from './helpers/gateway.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { freePorts } from './helpers/ports.js';
import { BOUNDED } from './helpers/wait.js';
import { startDns } from './helpers/dns-server.js';

test('regression: a restarted node resolves its DNS targets before its workers listen, so its first request is served (not 503 NoTargets)', BOUNDED, async (t) => {
  const dns = await startDns(t);
  dns.zone.a.set('api.restart.test', ['127.0.0.1']);
  const server: Server = createServer((_req, res) => res.end('up'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const dir = tempDir(t);
  const [dataPort, adminPort] = await freePorts(2);
  const opts: GatewayOptions = { dir, dataPort, adminPort, workers: 1, volume: 'virtual://state.db', keys: [{ ...ROOT_KEY, token: newToken() }], edit: (c) => void (c.discovery = { resolvers: [dns.address] }) };
  const gw1 = await startGateway(t, opts);
  await apply(gw1, [
    ['cluster', 'api', { targets: [{ dns: 'api.restart.test', port }] }],
    ['route', 'api', { pathPrefix: '/', cluster: 'api' }],
  ]);
  assert.equal((await gw1.stop('SIGTERM')).code, 0);
  const gw2 = await startGateway(t, opts);
  // The very first request after the ready line, before any admin call.
  const first = await request(`${gw2.dataUrl}/`);
  assert.equal(`${first.status} ${first.text}`, '200 up');
});
