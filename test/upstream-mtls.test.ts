import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, apply, dryRun, setEntity } from './helpers/admin.js';
import { request, type HttpResult } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';
import { makeCa } from './helpers/tls-certs.js';
import { httpsUpstream } from './helpers/https-upstream.js';

/**
 * mTLS to upstreams that demand a client certificate (real node:https servers, openssl-made
 * certificates): the certificate comes from environment variables worker.json
 * `secrets.env` allows the tenant, and its key shows up in no log line and no stored
 * document. Without one the upstream refuses: over TLS 1.2 as a handshake alert (502
 * Svc.Data.UpstreamTls), over TLS 1.3 by closing after the handshake (502).
 */

const SERVER_SANS = ['IP:127.0.0.1', 'DNS:localhost'];

const get = (gw: Gateway, path: string): Promise<HttpResult> => request(`${gw.dataUrl}${path}`);

test('mTLS: a client certificate from environment variables is presented; without it the upstream refuses; names follow secrets.env', BOUNDED, async (t) => {
  const ca = makeCa('Upstream CA');
  const clientCa = makeCa('Client CA');
  const client = clientCa.issue('switchyard-gateway', [], 'client');
  const serverCert = ca.issue('upstream', SERVER_SANS, 'server');
  const up13 = await httpsUpstream(t, serverCert, { clientCa: clientCa.cert });
  const up12 = await httpsUpstream(t, serverCert, { clientCa: clientCa.cert, maxVersion: 'TLSv1.2' });
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    env: { SY_T_CLIENT_CERT: client.cert, SY_T_CLIENT_KEY: client.key, SY_T_UNSET: undefined },
    edit: (c) => (c.secrets = { env: { default: ['SY_T_CLIENT_CERT', 'SY_T_CLIENT_KEY', 'SY_T_UNSET'] } }),
  });
  const route = (cluster: string): ['route', string, unknown] => ['route', cluster, { cluster, pathPrefix: `/${cluster}` }];
  await apply(gw, [
    ['cluster', 'bare12', { targets: [up12.target], tls: { ca: ca.cert } }],
    ['cluster', 'bare13', { targets: [up13.target], tls: { ca: ca.cert } }],
    route('bare12'),
    route('bare13'),
  ]);
  const refused12 = await get(gw, '/bare12');
  assert.equal(refused12.status, 502);
  assert.equal(refused12.json.code, 'Svc.Data.UpstreamTls', 'TLS 1.2: the refusal is a handshake alert');
  // TLS 1.3 completes the handshake before the server checks: it closes the connection.
  assert.equal((await get(gw, '/bare13')).status, 502);
  assert.equal(up12.seen.length + up13.seen.length, 0);

  const withCert = { ca: ca.cert, clientCertificate: { certificateEnv: 'SY_T_CLIENT_CERT', privateKeyEnv: 'SY_T_CLIENT_KEY' } };
  await apply(gw, [
    ['cluster', 'm12', { targets: [up12.target], tls: withCert }],
    ['cluster', 'm13', { targets: [up13.target], tls: withCert }],
    route('m12'),
    route('m13'),
  ]);
  for (const [path, up] of [['/m12', up12], ['/m13', up13]] as const) {
    const r = await get(gw, path);
    assert.equal(r.status, 200, `${path}: ${r.text}`);
    assert.equal(up.seen.at(-1)?.clientCn, 'switchyard-gateway');
  }

  // Names outside secrets.env are refused before any is read; a listed one must be set.
  await setEntity(gw, 'cluster', 'm12', { targets: [up12.target], tls: { ca: ca.cert, clientCertificate: { certificateEnv: 'PATH', privateKeyEnv: 'SY_T_UNSET' } } });
  const dr = await dryRun(gw);
  assert.equal(dr.status, 422, dr.text);
  assert.deepEqual(dr.json.issues.map((i) => [i.code, i.pointer]), [['Compile.Cluster.SecretNotAllowed', '/tls/clientCertificate/certificateEnv']]);
  await setEntity(gw, 'cluster', 'm12', { targets: [up12.target], tls: { ca: ca.cert, clientCertificate: { certificateEnv: 'SY_T_CLIENT_CERT', privateKeyEnv: 'SY_T_UNSET' } } });
  assert.deepEqual((await dryRun(gw)).json.issues.map((i) => [i.code, i.pointer]), [['Compile.Cluster.Tls', '/tls/clientCertificate/privateKeyEnv']]);

  // The key went from the environment to the TLS layer only.
  const keyBody = client.key.split('\n')[1]!;
  assert.ok(!gw.stderr().includes(keyBody), 'no log line holds the private key');
  const stored = await request(`${gw.adminUrl}/api/v1/default/config/get/cluster/m13`, { token: gw.tokens.root });
  assert.ok(!stored.text.includes('PRIVATE KEY') && !stored.text.includes(keyBody));
});

test('mTLS with cert entities: tls.ca and tls.clientCertificate name certs of the tenant (the key sealed with secrets.keyEnv); a missing name is an issue', BOUNDED, async (t) => {
  const ca = makeCa('Upstream CA');
  const clientCa = makeCa('Client CA');
  const client = clientCa.issue('switchyard-gateway', [], 'client');
  const up = await httpsUpstream(t, ca.issue('upstream', SERVER_SANS, 'server'), { clientCa: clientCa.cert });
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    env: { SY_T_SEAL: 'ab'.repeat(32) },
    edit: (c) => (c.secrets = { keyEnv: 'SY_T_SEAL' }),
  });
  await apply(gw, [
    // Neither is served on a TLS port: hosts [] makes a cert one only clusters name.
    ['cert', 'upstream-ca', { certificate: ca.cert, privateKey: ca.key, hosts: [] }],
    ['cert', 'gateway-client', { certificate: client.cert, privateKey: client.key, hosts: [] }],
    ['cluster', 'm', { targets: [up.target], tls: { ca: 'upstream-ca', clientCertificate: 'gateway-client' } }],
    ['route', 'm', { cluster: 'm' }],
  ]);
  const r = await get(gw, '/x');
  assert.equal(r.status, 200, r.text);
  assert.equal(up.seen.at(-1)?.clientCn, 'switchyard-gateway');
  const keyLine = client.key.split('\n')[1]!;
  assert.ok(!gw.stderr().includes(keyLine) && !gw.stdout().includes(keyLine), 'the key is in no log line');

  await setEntity(gw, 'cluster', 'm', { targets: [up.target], tls: { ca: 'nope', clientCertificate: 'nobody' } });
  assert.deepEqual((await dryRun(gw)).json.issues.map((i) => [i.code, i.pointer]), [['Compile.Cluster.Tls', '/tls/ca'], ['Compile.Cluster.Tls', '/tls/clientCertificate']]);
});
