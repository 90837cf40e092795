import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { request, type HttpResult } from './helpers/http.js';
import { ROOT_KEY, dryRun, publish, setEntity } from './helpers/admin.js';
import { startUpstream } from './helpers/upstream.js';
import { BOUNDED } from './helpers/wait.js';
import { NO_THROTTLE, issueKey } from './helpers/keys.js';

const api = (gw: Gateway, tenant: string, rest: string) => `${gw.adminUrl}/api/v1/${tenant}/${rest}`;
const set = (gw: Gateway, token: string, tenant: string, kind: string, name: string, doc: unknown) =>
  request(api(gw, tenant, `config/set/${kind}/${name}`), { method: 'POST', token, body: doc });
const viaData = (gw: Gateway, host: string, path = '/'): Promise<HttpResult> => request(`${gw.dataUrl}${path}`, { headers: { host } });
const denied = (r: HttpResult) => (r.json?.issues ?? []).filter((i: { code: string }) => i.code === 'Compile.Cluster.TargetDenied');

test("a tenant's sub-key cannot publish a route to the admin port, loopback, link-local or private addresses", BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: NO_THROTTLE });
  const sub = await issueKey(gw, gw.tokens.root!, 'acme', { name: 'ci', scopes: ['config:*', 'publish:*'] });
  const targets = [`127.0.0.1:${gw.adminPort}`, '127.0.0.1:22', '169.254.169.254:80', '10.0.0.1:80', `[::1]:${gw.adminPort}`, `127.1:${gw.adminPort}`, `0.0.0.0:${gw.dataPort}`];
  assert.equal((await set(gw, sub.token, 'acme', 'cluster', 'admin', { targets })).status, 200);
  assert.equal((await set(gw, sub.token, 'acme', 'route', 'all', { hosts: ['acme.example'], pathPrefix: '/', cluster: 'admin' })).status, 200);

  const dry = await request(api(gw, 'acme', 'publish/dry-run'), { method: 'POST', token: sub.token });
  assert.equal(dry.status, 422, dry.text);
  assert.deepEqual(denied(dry).map((i: { pointer: string }) => i.pointer), targets.map((_, i) => `/targets/${i}`));
  for (const i of denied(dry)) assert.equal(i.kind, 'cluster');
  assert.match(denied(dry)[0].message, new RegExp(`admin port \\(127\\.0\\.0\\.1:${gw.adminPort}\\)`));
  assert.match(denied(dry)[2].message, /link-local/);
  assert.match(denied(dry)[3].message, /private 10\.0\.0\.0\/8/);

  const go = await request(api(gw, 'acme', 'publish/go'), { method: 'POST', token: sub.token });
  assert.equal(go.status, 422, go.text);
  assert.equal(go.json.code, 'Svc.Publish.Rejected');
  const r = await viaData(gw, 'acme.example', '/api/v1/sys/whoami');
  assert.notEqual(r.status, 200, 'the admin API is not served on the data port');
  assert.equal(r.json?.code, 'Svc.Data.NotPublished');
});

test("no tenant, default included, reaches the gateway's own admin or data port; default keeps other loopback upstreams", BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const up = await startUpstream(t);
  await setEntity(gw, 'cluster', 'self', { targets: [`127.0.0.1:${gw.adminPort}`, `localhost:${gw.adminPort}`, `127.0.0.1:${gw.dataPort}`] });
  const dry = await dryRun(gw);
  assert.equal(dry.status, 422, dry.text);
  assert.deepEqual(dry.json.issues.map((i) => `${i.pointer} ${i.code}`), ['/targets/0 Compile.Cluster.TargetDenied', '/targets/2 Compile.Cluster.TargetDenied']);

  // A name is checked when a connection is made: localhost:<admin port> gets no answer from the admin API.
  await setEntity(gw, 'cluster', 'self', { targets: [`localhost:${gw.adminPort}`] });
  await setEntity(gw, 'cluster', 'up', { targets: [up.target] });
  await setEntity(gw, 'route', 'self', { pathPrefix: '/self', cluster: 'self' });
  await setEntity(gw, 'route', 'up', { pathPrefix: '/up', cluster: 'up' });
  await publish(gw);
  const self = await viaData(gw, 'x.example', '/self');
  assert.equal(self.status, 502, self.text);
  assert.equal(self.json.code, 'Svc.Data.UpstreamDenied');
  const ok = await viaData(gw, 'x.example', '/up');
  assert.equal(ok.status, 200, 'default reaches a loopback upstream');

  // A refused target is failed over like a refused connection: nothing was sent to it.
  await setEntity(gw, 'cluster', 'self', { targets: [`localhost:${gw.adminPort}`, up.target] });
  await publish(gw);
  for (let i = 0; i < 4; i++) {
    const r = await request(`${gw.dataUrl}/self`, { method: 'POST', body: 'x' });
    assert.equal(r.status, 200, `attempt ${i}: ${r.text}`);
  }
});

test('a host name that resolves to loopback is refused when the worker connects (502 Svc.Data.UpstreamDenied), services too', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const up = await startUpstream(t);
  let authCalls = 0;
  const auth = createServer((_req, res) => {
    authCalls++;
    res.end('ok');
  });
  await new Promise<void>((resolve) => auth.listen(0, '127.0.0.1', resolve));
  t.after(() => auth.close());
  const authPort = (auth.address() as AddressInfo).port;

  await setEntity(gw, 'cluster', 'named', { targets: [`localhost:${up.port}`] }, 'acme');
  await setEntity(gw, 'cluster', 'public', { targets: ['192.0.2.1:80'] }, 'acme');
  await setEntity(gw, 'route', 'named', { hosts: ['acme.example'], pathPrefix: '/named', cluster: 'named' }, 'acme');
  await setEntity(gw, 'route', 'authed', {
    hosts: ['acme.example'],
    pathPrefix: '/authed',
    cluster: 'public',
    steps: [{ code: 'forward-auth', settings: { url: `http://localhost:${authPort}/verify` } }],
  }, 'acme');
  await publish(gw, 'acme');
  for (let i = 0; i < 3; i++) {
    const r = await viaData(gw, 'acme.example', '/named');
    assert.equal(r.status, 502, r.text);
    assert.equal(r.json.code, 'Svc.Data.UpstreamDenied');
  }
  assert.equal(up.requests.length, 0, 'nothing reached the loopback upstream');
  const a = await viaData(gw, 'acme.example', '/authed');
  assert.equal(a.status, 503, a.text);
  assert.equal(a.json.code, 'Svc.Data.AuthUnavailable');
  assert.equal(authCalls, 0, 'nothing reached the loopback auth service');

  // A literal service URL is refused at compile time.
  await setEntity(gw, 'route', 'authed', {
    hosts: ['acme.example'],
    cluster: 'public',
    steps: [{ code: 'http-callout', settings: { url: `http://127.0.0.1:${authPort}/x`, map: { 'x-a': '/a' } } }],
  }, 'acme');
  const dry = await dryRun(gw, 'acme');
  assert.equal(dry.status, 422, dry.text);
  assert.deepEqual(dry.json.issues.map((i) => `${i.pointer} ${i.code}`), ['/steps/0/settings/url Compile.Step.UrlDenied']);
});

test("worker.json upstreams.allow opens a range to tenants, deny closes one to all, and the admin port stays closed", BOUNDED, async (t) => {
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    edit: (c) => void (c.upstreams = { allow: ['127.0.0.1/32'], deny: ['127.0.0.3/32'] }),
  });
  const up = await startUpstream(t);
  await setEntity(gw, 'cluster', 'up', { targets: [up.target] }, 'acme');
  await setEntity(gw, 'route', 'up', { hosts: ['acme.example'], cluster: 'up' }, 'acme');
  await publish(gw, 'acme');
  const r = await viaData(gw, 'acme.example', '/x');
  assert.equal(r.status, 200, r.text);
  assert.equal(up.requests.length, 1);

  await setEntity(gw, 'cluster', 'up', { targets: [up.target, `127.0.0.2:${up.port}`, `127.0.0.1:${gw.adminPort}`] }, 'acme');
  const dry = await dryRun(gw, 'acme');
  assert.equal(dry.status, 422, dry.text);
  assert.deepEqual(dry.json.issues.map((i) => i.pointer), ['/targets/1', '/targets/2']);
  assert.match(dry.json.issues[1]!.message, /admin port/);

  await setEntity(gw, 'cluster', 'd', { targets: [`127.0.0.3:${up.port}`] });
  const dd = await dryRun(gw);
  assert.equal(dd.status, 422, dd.text);
  assert.equal(dd.json.issues[0]!.message, `target 127.0.0.3:${up.port} is refused: upstreams.deny 127.0.0.3/32`);
});
