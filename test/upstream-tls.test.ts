import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, apply, dryRun, setEntity } from './helpers/admin.js';
import { request, type HttpResult } from './helpers/http.js';
import { BOUNDED, waitFor } from './helpers/wait.js';
import { makeCa } from './helpers/tls-certs.js';
import { httpsUpstream } from './helpers/https-upstream.js';
import type { Json } from './helpers/json.js';

/**
 * TLS to upstreams, against real node:https servers with certificates openssl makes here:
 * a certificate that does not verify is 502 Svc.Data.UpstreamTls with a warn line saying
 * why, until the cluster trusts its CA; the name checked is the cluster's serverName, not
 * the client's Host; verify:false works and warns; health checks speak TLS with the
 * cluster's settings; the upstream allow-list holds (mTLS: upstream-mtls.test.ts).
 */

const SERVER_SANS = ['IP:127.0.0.1', 'DNS:localhost'];

const get = (gw: Gateway, path = '/x', headers: Record<string, string> = {}): Promise<HttpResult> => request(`${gw.dataUrl}${path}`, { headers });

function tlsFailures(gw: Gateway): Json[] {
  return gw.logLines().filter((l) => l?.msg === 'upstream TLS failed');
}

test('an https target with an unknown CA: 502 Svc.Data.UpstreamTls and a warn line until tls.ca names the CA; failover passes it over', BOUNDED, async (t) => {
  const ca = makeCa('Upstream CA');
  const other = makeCa('Some other CA');
  const up = await httpsUpstream(t, ca.issue('upstream', SERVER_SANS, 'server'));
  const stranger = await httpsUpstream(t, other.issue('stranger', SERVER_SANS, 'server'));
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [['cluster', 'up', { targets: [up.target] }], ['route', 'r', { cluster: 'up', pathPrefix: '/' }]]);

  const refused = await get(gw);
  assert.equal(refused.status, 502, refused.text);
  assert.equal(refused.json.code, 'Svc.Data.UpstreamTls');
  assert.equal(up.seen.length, 0, 'no request reached the upstream');
  const line = await waitFor('the warn line', () => tlsFailures(gw)[0]);
  assert.equal(line.level, 40);
  assert.equal(line.cluster, 'default/up');
  assert.equal(line.target, up.target);
  assert.equal(line.reason, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');

  await apply(gw, [['cluster', 'up', { targets: [up.target], tls: { ca: ca.cert } }]]);
  const ok = await get(gw, '/after-ca');
  assert.equal(ok.status, 200, ok.text);
  assert.equal(up.seen.at(-1)?.path, '/after-ca');
  assert.equal(up.seen.at(-1)?.servername, false, 'an IP target sends no SNI');

  // A target whose certificate the cluster's CA did not sign fails its handshake: a
  // connect failure, so every request fails over to the one that verifies.
  await apply(gw, [['cluster', 'up', { targets: [stranger.target, up.target], tls: { ca: ca.cert } }]]);
  const before = up.seen.length;
  for (let i = 0; i < 4; i++) assert.equal((await get(gw, `/fo${i}`)).status, 200);
  assert.equal(up.seen.length - before, 4);
  assert.equal(stranger.seen.length, 0);
  assert.ok(tlsFailures(gw).some((l) => l.target === stranger.target), 'the stranger is logged');
});

test('the name checked is tls.serverName (a mismatch is refused), never the client\'s Host', BOUNDED, async (t) => {
  const ca = makeCa('Upstream CA');
  const up = await httpsUpstream(t, ca.issue('upstream', SERVER_SANS, 'server'));
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [['cluster', 'up', { targets: [up.target], tls: { ca: ca.cert, serverName: 'other.example' } }], ['route', 'r', { cluster: 'up', pathPrefix: '/' }]]);
  const mismatch = await get(gw);
  assert.equal(mismatch.status, 502);
  assert.equal(mismatch.json.code, 'Svc.Data.UpstreamTls');
  assert.equal((await waitFor('the warn line', () => tlsFailures(gw)[0])).reason, 'ERR_TLS_CERT_ALTNAME_INVALID');
  // The client naming a host the certificate has does not make it pass.
  assert.equal((await get(gw, '/x', { host: 'localhost' })).status, 502);

  await apply(gw, [['cluster', 'up', { targets: [up.target], tls: { ca: ca.cert, serverName: 'localhost' } }]]);
  for (const host of ['localhost', 'a.example', 'b.example']) {
    const r = await get(gw, '/sni', { host });
    assert.equal(r.status, 200, r.text);
    assert.equal(up.seen.at(-1)?.servername, 'localhost', 'SNI is the serverName');
    assert.equal(up.seen.at(-1)?.host, host, 'the Host header still goes upstream');
  }
});

test('verify: false reaches an unverifiable target and is a dry-run warning; tls without an https target is a compile issue', BOUNDED, async (t) => {
  const up = await httpsUpstream(t, makeCa('Nobody trusts me').issue('upstream', SERVER_SANS, 'server'));
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await setEntity(gw, 'cluster', 'up', { targets: [`https://127.0.0.1:${up.port}`], tls: { verify: false } });
  await setEntity(gw, 'route', 'r', { cluster: 'up', pathPrefix: '/' });
  const dr = await dryRun(gw);
  assert.equal(dr.status, 200, dr.text);
  assert.deepEqual(dr.json.warnings.map((w) => [w.code, w.name, w.pointer]), [['Compile.Cluster.TlsUnverified', 'up', '/tls/verify']]);
  await apply(gw, []);
  assert.equal((await get(gw)).status, 200);

  await setEntity(gw, 'cluster', 'plain', { targets: ['127.0.0.1:9', 'http://127.0.0.1:10'], tls: { verify: false } });
  await setEntity(gw, 'cluster', 'badca', { targets: [up.target], tls: { ca: 'not a certificate' } });
  const bad = await dryRun(gw);
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(bad.json.issues.map((i) => [i.code, i.name, i.pointer]).sort(), [
    ['Compile.Cluster.Tls', 'badca', '/tls/ca'],
    ['Compile.Cluster.Tls', 'plain', '/tls'],
  ]);
});

test('health checks probe https targets with the cluster\'s TLS settings; the health API names targets as written', BOUNDED, async (t) => {
  const ca = makeCa('Upstream CA');
  const good = await httpsUpstream(t, ca.issue('upstream', SERVER_SANS, 'server'));
  const untrusted = await httpsUpstream(t, makeCa('Stranger CA').issue('stranger', SERVER_SANS, 'server'));
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const healthCheck = { path: '/health', intervalMs: 100, healthyThreshold: 2, unhealthyThreshold: 2, initial: 'unhealthy' };
  await apply(gw, [['cluster', 'c', { targets: [good.target, untrusted.target], tls: { ca: ca.cert }, healthCheck }], ['route', 'r', { cluster: 'c', pathPrefix: '/' }]]);
  type Row = { target: string; state: string; successes: number; failures: number };
  const rows = () => request(`${gw.adminUrl}/api/v1/default/clusters/c/health`, { token: gw.tokens.root }).then((r) => (r.json as { targets: Row[] }).targets);
  const settled = await waitFor('the good target healthy, the stranger failing', async () => {
    const list = await rows();
    const g = list.find((r) => r.target === good.target);
    const s = list.find((r) => r.target === untrusted.target);
    return g?.state === 'healthy' && s !== undefined && s.failures >= 2 ? list : undefined;
  });
  assert.equal(settled.find((r) => r.target === untrusted.target)?.state, 'unhealthy');
  assert.ok(good.seen.some((s) => s.path === '/health' && s.host === `127.0.0.1:${good.port}`), 'probes went over TLS with Host host:port');
  assert.equal(untrusted.seen.length, 0);
  assert.equal((await get(gw)).status, 200, 'traffic goes to the healthy target');
});

test('the upstream allow-list holds for https targets: an IP refused at publish, a name refused when it resolves', BOUNDED, async (t) => {
  const ca = makeCa('Upstream CA');
  const up = await httpsUpstream(t, ca.issue('upstream', SERVER_SANS, 'server'));
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const route = { cluster: 'up', pathPrefix: '/', hosts: ['acme.example'] };
  await setEntity(gw, 'cluster', 'up', { targets: [up.target], tls: { ca: ca.cert } }, 'acme');
  await setEntity(gw, 'route', 'r', route, 'acme');
  const dr = await dryRun(gw, 'acme');
  assert.equal(dr.status, 422, dr.text);
  assert.deepEqual(dr.json.issues.map((i) => [i.code, i.pointer]), [['Compile.Cluster.TargetDenied', '/targets/0']]);

  // A host name is checked against what it resolves to, before any handshake.
  await apply(gw, [['cluster', 'up', { targets: [`https://localhost:${up.port}`], tls: { ca: ca.cert } }]], 'acme');
  const r = await get(gw, '/x', { host: 'acme.example' });
  assert.equal(r.status, 502, r.text);
  assert.equal(r.json.code, 'Svc.Data.UpstreamDenied');
  assert.equal(up.seen.length + up.tlsErrors.length, 0, 'no connection reached the upstream');

  // The default tenant may reach it: the name is then the SNI and the name verified.
  await apply(gw, [['cluster', 'up', { targets: [`https://localhost:${up.port}`], tls: { ca: ca.cert } }], ['route', 'r', { cluster: 'up', pathPrefix: '/' }]]);
  const ok = await get(gw, '/x');
  assert.equal(ok.status, 200, ok.text);
  assert.equal(up.seen.at(-1)?.servername, 'localhost');
});
