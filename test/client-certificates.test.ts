import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway, tempDir, writeJson, type Gateway } from './helpers/gateway.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { runCli } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { BOUNDED } from './helpers/wait.js';
import { uwsSupport } from '../src/shared/uws-support.js';
import { makeCa, pemFiles, type PemFiles } from './helpers/tls-certs.js';

/**
 * Client certificates on the TLS listener (worker.json listen.tls.clientCertificates) and the
 * client-cert step, end to end: real `switchyard run` processes, certificates made here with
 * openssl, real curl presenting them. One gateway per mode, shared by its subtests.
 */

const HOST = 'mtls.test';

interface Pki {
  dir: string;
  /** The server CA curl trusts (--cacert). */
  serverCa: string;
  /** The client CA the gateway trusts, PEM. */
  clientCa: string;
  serverCert: { certificate: string; privateKey: string };
  /** Signed by the client CA: alice has SANs, bob none. */
  alice: PemFiles;
  bob: PemFiles;
  /** Signed by another CA, with alice's subject and SANs. */
  mallory: PemFiles;
}

function makePki(t: TestContext): Pki {
  const dir = tempDir(t, 'sy-mtls-');
  const server = makeCa('Switchyard Test Server CA');
  const clients = makeCa('Switchyard Test Client CA');
  const other = makeCa('Another CA');
  const srv = server.issue(HOST, [`DNS:${HOST}`], 'server');
  const aliceSans = ['URI:spiffe://acme.test/alice', 'DNS:Alice.Acme.Test'];
  writeFileSync(join(dir, 'server-ca.pem'), server.cert);
  return {
    dir,
    serverCa: join(dir, 'server-ca.pem'),
    clientCa: clients.cert,
    serverCert: { certificate: srv.cert, privateKey: srv.key },
    alice: pemFiles(dir, 'alice', clients.issue('alice', aliceSans, 'client')),
    bob: pemFiles(dir, 'bob', clients.issue('bob', [], 'client')),
    mallory: pemFiles(dir, 'mallory', other.issue('alice', aliceSans, 'client')),
  };
}

interface Curl {
  /** curl's exit code: 0 when an answer came (any status). */
  exit: number;
  status: number;
  version: string;
  body: string;
}

/** curl to the TLS port (async: the upstream answers from this process). */
function curl(pki: Pki, port: number, path: string, o: { cert?: PemFiles; headers?: string[]; http2?: boolean } = {}): Promise<Curl> {
  const args = ['-sS', '--max-time', '10', '--cacert', pki.serverCa, '--resolve', `${HOST}:${port}:127.0.0.1`, o.http2 ? '--http2' : '--http1.1'];
  if (o.cert) args.push('--cert', o.cert.cert, '--key', o.cert.key);
  for (const h of o.headers ?? []) args.push('-H', h);
  args.push('-w', '\n%{http_code} %{http_version}', `https://${HOST}:${port}${path}`);
  return new Promise((resolve) => {
    execFile('curl', args, { encoding: 'utf8' }, (err, stdout) => {
      const lines = stdout.split('\n');
      const [status, version] = (lines.pop() ?? '').split(' ');
      resolve({ exit: err ? ((err as { code?: number }).code ?? -1) : 0, status: Number(status), version: version ?? '', body: lines.join('\n') });
    });
  });
}

async function mtlsGateway(t: TestContext, pki: Pki, clientCertificates: Record<string, string>): Promise<{ gw: Gateway; up: Upstream; tlsPort: number }> {
  const up = await startUpstream(t);
  const tlsPort = await freePort();
  const dir = tempDir(t);
  writeFileSync(join(dir, 'client-ca.pem'), pki.clientCa);
  const gw = await startGateway(t, {
    dir,
    keys: [ROOT_KEY],
    engine: 'auto',
    edit: (c) => {
      (c.listen as Record<string, unknown>).tls = { port: tlsPort, clientCertificates };
    },
  });
  const fingerprint = (p: PemFiles) => new X509Certificate(p.pem).fingerprint256;
  const published = await apply(gw, [
    ['cert', 'srv', { ...pki.serverCert, default: true }],
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'any', { cluster: 'up', pathPrefix: '/any', steps: [{ code: 'client-cert', settings: {} }] }],
    ['route', 'by-subject', { cluster: 'up', pathPrefix: '/by-subject', steps: [{ code: 'client-cert', settings: { subjects: ['CN=alice'] } }] }],
    ['route', 'by-san', { cluster: 'up', pathPrefix: '/by-san', steps: [{ code: 'client-cert', settings: { sans: ['URI:spiffe://acme.test/alice'] } }] }],
    // node's colon form, upper case: the step normalises it.
    ['route', 'by-fingerprint', { cluster: 'up', pathPrefix: '/by-fingerprint', steps: [{ code: 'client-cert', settings: { fingerprints: [fingerprint(pki.bob)] } }] }],
    ['route', 'open', { cluster: 'up', pathPrefix: '/open' }],
  ]);
  // The listener asks for certificates: no Compile.Tls.NoClientCertificates (its presence without is unit-tested).
  assert.deepEqual((published.warnings ?? []).filter((w) => w.code.startsWith('Compile.Tls.')), []);
  return { gw, up, tlsPort };
}

/** The identity headers the upstream got with its last request. */
function seen(up: Upstream): Record<string, string | undefined> {
  const h = up.requests.at(-1)!.headers;
  const one = (n: string) => (h[n] === undefined ? undefined : String(h[n]));
  return { subject: one('x-client-cert-subject'), issuer: one('x-client-cert-issuer'), fingerprint: one('x-client-cert-fingerprint'), san: one('x-client-cert-san') };
}

const aliceFingerprint = (pki: Pki) => new X509Certificate(pki.alice.pem).fingerprint256.replaceAll(':', '').toLowerCase();

test('optional mode: a verified certificate reaches client-cert routes with its identity; none, another CA\'s, or the plain port get 401; lists give 403; forged headers never pass', BOUNDED, async (t) => {
  const pki = makePki(t);
  // The CA as a file beside worker.json (a relative path).
  const { gw, up, tlsPort } = await mtlsGateway(t, pki, { ca: 'client-ca.pem', mode: 'optional' });
  // auto takes node for the client certificates, or earlier, where the uws binary cannot load here, for that.
  const uws = uwsSupport();
  const reasons = ['client certificates are asked for', ...(uws.ok ? [] : [uws.reason])];
  const said = gw.stderr().match(/data plane engine node \(auto: ([^\n]*)/)?.[1] ?? '';
  assert.ok(reasons.some((r) => said.startsWith(r)), `auto took node, saying why: ${said || gw.stderr()}`);

  await t.test('alice over HTTP/1.1 and h2: the upstream sees her subject, issuer, fingerprint and SANs, not the forged ones', async () => {
    for (const http2 of [false, true]) {
      const before = up.requests.length;
      const r = await curl(pki, tlsPort, '/any', { cert: pki.alice, http2, headers: ['x-client-cert-subject: forged', 'x-client-cert-fingerprint: forged'] });
      assert.equal(r.status, 200, r.body);
      assert.equal(r.version, http2 ? '2' : '1.1');
      assert.equal(up.requests.length, before + 1);
      assert.deepEqual(seen(up), {
        subject: 'CN=alice',
        issuer: 'CN=Switchyard Test Client CA',
        fingerprint: aliceFingerprint(pki),
        san: 'URI:spiffe://acme.test/alice, DNS:alice.acme.test',
      });
    }
  });

  await t.test('bob has no SANs: a forged SAN header is dropped, not passed on', async () => {
    const r = await curl(pki, tlsPort, '/any', { cert: pki.bob, headers: ['x-client-cert-san: URI:spiffe://acme.test/admin'] });
    assert.equal(r.status, 200, r.body);
    assert.equal(seen(up).subject, 'CN=bob');
    assert.equal(seen(up).san, undefined);
  });

  await t.test('no certificate, a certificate from another CA (alice\'s subject), and the plain port: 401, the upstream never asked', async () => {
    const before = up.requests.length;
    const none = await curl(pki, tlsPort, '/any', { headers: ['x-client-cert-subject: CN=alice'] });
    assert.equal(none.exit, 0, 'optional mode completes the handshake without a certificate');
    assert.equal(none.status, 401);
    assert.equal(JSON.parse(none.body).code, 'Svc.Data.Unauthenticated');
    const mallory = await curl(pki, tlsPort, '/any', { cert: pki.mallory });
    assert.equal(mallory.exit, 0, 'optional mode completes the handshake with an unverified certificate');
    assert.equal(mallory.status, 401, 'a certificate the CA did not sign counts for nothing');
    const plain = await fetch(`http://127.0.0.1:${gw.dataPort}/any`, { headers: { 'x-client-cert-subject': 'CN=alice' } });
    assert.equal(plain.status, 401);
    assert.equal(((await plain.json()) as { code: string }).code, 'Svc.Data.Unauthenticated');
    assert.equal(up.requests.length, before, 'no refused request reached the upstream');
    // A route without the step still serves a client without a certificate.
    assert.equal((await curl(pki, tlsPort, '/open')).status, 200);
  });

  await t.test('subjects, sans and fingerprints: 403 for a verified certificate none lists', async () => {
    const cases: [string, PemFiles, number][] = [
      ['/by-subject', pki.alice, 200], ['/by-subject', pki.bob, 403],
      ['/by-san', pki.alice, 200], ['/by-san', pki.bob, 403],
      ['/by-fingerprint', pki.bob, 200], ['/by-fingerprint', pki.alice, 403],
      ['/by-subject', pki.mallory, 401],
    ];
    for (const [path, cert, status] of cases) {
      const r = await curl(pki, tlsPort, path, { cert });
      assert.equal(r.status, status, `${path} with ${cert.name}: ${r.body}`);
      if (status === 403) assert.equal(JSON.parse(r.body).code, 'Svc.Data.Forbidden');
    }
  });
});

test('required mode: the handshake is refused without a certificate the CA verifies; a verified one reaches the route', BOUNDED, async (t) => {
  const pki = makePki(t);
  // The CA as PEM text in worker.json.
  const { up, tlsPort } = await mtlsGateway(t, pki, { ca: pki.clientCa, mode: 'required' });
  const before = up.requests.length;
  const none = await curl(pki, tlsPort, '/open');
  assert.notEqual(none.exit, 0, 'curl without a certificate fails its handshake');
  assert.equal(none.status, 0);
  const mallory = await curl(pki, tlsPort, '/open', { cert: pki.mallory });
  assert.notEqual(mallory.exit, 0, 'a certificate from another CA fails the handshake');
  assert.equal(up.requests.length, before, 'nothing reached the upstream');
  for (const http2 of [false, true]) {
    const r = await curl(pki, tlsPort, '/any', { cert: pki.alice, http2, headers: ['x-client-cert-subject: forged'] });
    assert.equal(r.status, 200, r.body);
    assert.equal(seen(up).subject, 'CN=alice');
    assert.equal(seen(up).fingerprint, aliceFingerprint(pki));
  }
  assert.equal((await curl(pki, tlsPort, '/by-subject', { cert: pki.bob })).status, 403);
});

test('validate: client certificates need the node engine (explicit uws refused, auto takes node); a CA that cannot serve is an error at its path', BOUNDED, async (t) => {
  const dir = tempDir(t);
  const ca = makeCa('Validate CA');
  const leaf = ca.issue('leaf', [], 'client');
  writeFileSync(join(dir, 'ca.pem'), ca.cert);
  writeFileSync(join(dir, 'leaf.pem'), leaf.cert);
  const file = (name: string, engine: string, clientCertificates: Record<string, string>) =>
    writeJson(join(dir, name), { volume: 'memory:', listen: { port: 18080, engine, tls: { port: 18443, clientCertificates } }, admin: { listen: '127.0.0.1:19180' } });
  const run = (f: string) => runCli(['validate', '--config', f]);
  const errors = (json: unknown) => ((json as { errors?: { path: string; message: string }[] }).errors ?? []).map((e) => `${e.path}: ${e.message}`);

  const uws = await run(file('uws.json', 'uws', { ca: 'ca.pem' }));
  assert.equal(uws.code, 10);
  assert.ok(errors(uws.json).some((e) => /^listen\.tls\.clientCertificates: the uws engine does not show the client certificate/.test(e)), JSON.stringify(uws.json));

  const auto = await run(file('auto.json', 'auto', { ca: 'ca.pem', mode: 'optional' }));
  assert.equal(auto.code, 0, auto.stdout);
  const tlsLine = (auto.json as { listeners: { line: string }[] }).listeners[1]!.line;
  assert.match(tlsLine, /^TLS port 0\.0\.0\.0:18443: engine node, ALPN h2, http\/1\.1, client certificates optional$/);

  // The CA's own checks are unit-tested (client-ca.test.ts): here, that validate reports one at its path.
  const notCa = await run(file('leaf.json', 'auto', { ca: 'leaf.pem' }));
  assert.equal(notCa.code, 10);
  assert.ok(errors(notCa.json).some((e) => /^listen\.tls\.clientCertificates\.ca: certificate 1 \(CN=leaf\) is not a CA/.test(e)), JSON.stringify(notCa.json));
});
