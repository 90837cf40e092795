import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type TLSSocket } from 'node:tls';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, dryRun, getEntity, setEntity } from './helpers/admin.js';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePort } from './helpers/ports.js';
import { BOUNDED, sleep } from './helpers/wait.js';
import { issue, makePki, type Pki } from './helpers/certs.js';
import type { Json } from './helpers/json.js';

interface Tls {
  gw: Gateway;
  up: Upstream;
  pki: Pki;
  tlsPort: number;
}

async function tlsGateway(t: Parameters<typeof startGateway>[0], env: Record<string, string> = {}, extra: Record<string, Json> = {}): Promise<Tls> {
  const pki = makePki(t);
  const up = await startUpstream(t);
  const tlsPort = await freePort();
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    env,
    edit: (c) => {
      (c.listen as Record<string, Json>).tls = { port: tlsPort };
      Object.assign(c, extra);
    },
  });
  return { gw, up, pki, tlsPort };
}

/** A TLS handshake with `servername` (none: no SNI); the certificate's CN, or the error. */
function handshake(port: number, ca: string, servername: string | undefined, o: { maxVersion?: 'TLSv1.1' } = {}): Promise<{ cn?: string; fingerprint?: string; authorized?: boolean; error?: string }> {
  return new Promise((resolve) => {
    const s: TLSSocket = connect({ port, host: '127.0.0.1', ca, ...(servername ? { servername } : {}), rejectUnauthorized: false, ...(o.maxVersion ? { maxVersion: o.maxVersion, minVersion: 'TLSv1' } : {}) }, () => {
      const c = s.getPeerCertificate();
      resolve({ cn: c.subject?.CN as string | undefined, fingerprint: c.fingerprint256, authorized: s.authorized });
      s.destroy();
    });
    s.on('error', (e) => resolve({ error: e.message }));
    s.setTimeout(3_000, () => {
      resolve({ error: 'timeout' });
      s.destroy();
    });
  });
}

test('SNI picks each host\'s certificate on one TLS port; an unknown name is refused until a default exists; TLS 1.1 is refused; curl reaches it', BOUNDED, async (t) => {
  const { gw, up, pki, tlsPort } = await tlsGateway(t);
  const a = issue(pki, ['a.test', '*.a.test']);
  const b = issue(pki, ['b.test']);
  await apply(gw, [
    ['cert', 'a', a],
    ['cert', 'b', b],
    ['cluster', 'c', { targets: [up.target] }],
    ['route', 'all', { cluster: 'c' }],
  ]);
  assert.equal((await handshake(tlsPort, pki.ca, 'a.test')).cn, 'a.test');
  assert.deepEqual(await handshake(tlsPort, pki.ca, 'x.a.test').then((r) => [r.cn, r.authorized]), ['a.test', true]);
  assert.equal((await handshake(tlsPort, pki.ca, 'b.test')).cn, 'b.test');
  assert.ok((await handshake(tlsPort, pki.ca, 'nobody.test')).error, 'an unknown name gets no certificate');
  assert.ok((await handshake(tlsPort, pki.ca, 'a.test', { maxVersion: 'TLSv1.1' })).error, 'TLS 1.1 is refused');

  // curl verifies the chain and the name with the CA alone (run async: the upstream answers from this process).
  const { stdout: out } = await promisify(execFile)('curl', ['-sS', '--cacert', `${pki.dir}/ca.pem`, '--resolve', `b.test:${tlsPort}:127.0.0.1`, `https://b.test:${tlsPort}/hello?x=1`, '-o', '/dev/null', '-w', '%{http_code} %{ssl_verify_result}'], { encoding: 'utf8' });
  assert.equal(out, '200 0');
  const seen = up.requests.at(-1)!;
  assert.equal(seen.headers['x-forwarded-proto'], 'https');
  assert.equal(seen.headers['x-forwarded-port'], String(tlsPort));

  const fallback = issue(pki, ['fallback.test']);
  await apply(gw, [['cert', 'fallback', { ...fallback, default: true }]]);
  assert.equal((await handshake(tlsPort, pki.ca, 'nobody.test')).cn, 'fallback.test');
  assert.equal((await handshake(tlsPort, pki.ca, 'a.test')).cn, 'a.test', 'a named certificate still wins');
});

test('a renewed certificate serves new connections after a publish; 16 keep-alive TLS clients see no error across 10 publishes', BOUNDED, async (t) => {
  const { gw, up, pki, tlsPort } = await tlsGateway(t);
  await apply(gw, [['cert', 'a', issue(pki, ['a.test'])], ['cluster', 'c', { targets: [up.target] }], ['route', 'all', { cluster: 'c' }]]);
  // Made first: openssl blocks this process, where the upstream answers too.
  const renewals = Array.from({ length: 10 }, () => issue(pki, ['a.test']));
  const agent = new Agent({ connections: 16, connect: { ca: pki.ca, servername: 'a.test' } });
  t.after(() => agent.close());
  let running = true;
  const counts = { ok: 0, failed: 0 };
  const loops = Array.from({ length: 16 }, async () => {
    while (running) {
      try {
        const r = await request(`https://127.0.0.1:${tlsPort}/x`, { dispatcher: agent, headers: { host: 'a.test' } });
        await r.body.text();
        if (r.statusCode === 200) counts.ok++;
        else counts.failed++;
      } catch {
        counts.failed++;
        await sleep(20); // a gateway gone must not turn this loop into a spin
      }
    }
  });
  const fingerprints = new Set<string>();
  for (const renewed of renewals) {
    await apply(gw, [['cert', 'a', renewed]]);
    const seen = await handshake(tlsPort, pki.ca, 'a.test');
    assert.equal(seen.authorized, true);
    fingerprints.add(seen.fingerprint!);
  }
  running = false;
  await Promise.all(loops);
  t.diagnostic(`${counts.ok} requests, ${counts.failed} failed, ${fingerprints.size} fingerprints seen`);
  assert.equal(counts.failed, 0);
  assert.ok(counts.ok > 100);
  assert.equal(fingerprints.size, 10, 'each publish served its own certificate to new connections');
});

test('tls "required": a request on the plain port gets 308 to the same URL on https; over TLS it is served', BOUNDED, async (t) => {
  const { gw, up, pki, tlsPort } = await tlsGateway(t);
  await apply(gw, [
    ['cert', 'a', issue(pki, ['a.test'])],
    ['cluster', 'c', { targets: [up.target] }],
    ['route', 'secure', { cluster: 'c', hosts: ['a.test'], tls: 'required' }],
  ]);
  const plain = await request(`http://127.0.0.1:${gw.dataPort}/p/q?x=1&y=2`, { headers: { host: `a.test:${gw.dataPort}` } });
  await plain.body.text();
  assert.equal(plain.statusCode, 308);
  assert.equal(plain.headers.location, `https://a.test:${tlsPort}/p/q?x=1&y=2`);
  const agent = new Agent({ connect: { ca: pki.ca, servername: 'a.test' } });
  t.after(() => agent.close());
  const secure = await request(`https://127.0.0.1:${tlsPort}/p/q`, { dispatcher: agent, headers: { host: 'a.test' } });
  await secure.body.text();
  assert.equal(secure.statusCode, 200);
  assert.equal(up.requests.length, 1, 'only the TLS request reached the upstream');
});

test('dry-run refuses a key that is not the certificate\'s and an expired certificate, and warns of one expiring in 10 days', BOUNDED, async (t) => {
  const { gw, pki } = await tlsGateway(t);
  const a = issue(pki, ['a.test']);
  const b = issue(pki, ['b.test']);
  await setEntity(gw, 'cert', 'mismatch', { certificate: a.certificate, privateKey: b.privateKey });
  await setEntity(gw, 'cert', 'expired', issue(pki, ['old.test'], { from: new Date(Date.now() - 60 * 86_400_000), to: new Date(Date.now() - 86_400_000) }));
  let r = await dryRun(gw);
  assert.equal(r.status, 422);
  const codes = r.json.issues.map((i) => `${i.name} ${i.code}`).sort();
  assert.deepEqual(codes, ['expired Compile.Cert.Expired', 'mismatch Compile.Cert.KeyMismatch']);
  assert.ok(!JSON.stringify(r.json).includes(b.privateKey.split('\n')[1]!), 'no issue quotes the key');

  await setEntity(gw, 'cert', 'mismatch', a);
  await setEntity(gw, 'cert', 'expired', issue(pki, ['soon.test'], { to: new Date(Date.now() + 10 * 86_400_000) }));
  r = await dryRun(gw);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.deepEqual(
    (r.json.warnings as { name: string; code: string }[]).filter((w) => w.code.startsWith('Compile.Cert')).map((w) => `${w.name} ${w.code}`),
    ['expired Compile.Cert.Expiring'],
  );
});

test('the private key never shows: config get and list, the audit trail, the logs and the SQLite file (sealed with secrets.keyEnv)', BOUNDED, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-tls-vol-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { gw, pki } = await tlsGateway(t, { SY_TEST_SEAL: randomBytes(32).toString('base64') }, { volume: `virtual://${dir}/state.db`, secrets: { keyEnv: 'SY_TEST_SEAL' } });
  const a = issue(pki, ['a.test'], { keyType: 'rsa' });
  await apply(gw, [['cert', 'a', a]]);
  const view = (await getEntity(gw, 'cert', 'a')) as unknown as { draft: { doc: Record<string, Json> } | null; published: { doc: Record<string, Json> } };
  assert.equal(view.published.doc.privateKey, '(write-only)');
  const info = view.published.doc.info as Record<string, Json>;
  assert.deepEqual([info.dnsNames, info.keyType], [['a.test'], 'rsa']);
  assert.match(String(info.fingerprint256), /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  assert.equal((await handshake(gw.config.listen ? (gw.config.listen as { tls: { port: number } }).tls.port : 0, pki.ca, 'a.test')).cn, 'a.test', 'the sealed key serves');

  // Lines of the key's base64 body: any one of them anywhere is a leak.
  const keyLines = a.privateKey.split('\n').filter((l) => l.length > 40);
  const list = await request(`${gw.adminUrl}/api/v1/default/config/list/cert`, { headers: { authorization: `Bearer ${gw.tokens.root}` } });
  const audit = await request(`${gw.adminUrl}/api/v1/default/audit/list`, { headers: { authorization: `Bearer ${gw.tokens.root}` } });
  const seen = [JSON.stringify(view), await list.body.text(), await audit.body.text(), gw.stdout(), gw.stderr()];
  const files = readdirSync(dir).map((f) => readFileSync(join(dir, f)).toString('latin1'));
  assert.ok(files.join('').length > 0, 'the volume has files');
  for (const [what, text] of [...seen.map((s, i) => [['get', 'list', 'audit', 'stdout', 'stderr'][i]!, s] as const), ...files.map((f, i) => [`volume file ${i}`, f] as const)]) {
    for (const line of keyLines) assert.ok(!text.includes(line), `${what} holds a line of the private key`);
  }
});

test('a tenant\'s certificate may serve only hosts the tenant may claim; only the default tenant has a default certificate', BOUNDED, async (t) => {
  const pki = makePki(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [['route', 'shop', { directResponse: { statusCode: 200, body: 'acme' }, hosts: ['shop.test'] }]], 'acme');
  await setEntity(gw, 'cert', 'steal', issue(pki, ['shop.test']), 'evil');
  await setEntity(gw, 'cert', 'fallback', { ...issue(pki, ['evil.test']), default: true }, 'evil');
  const r = await dryRun(gw, 'evil');
  assert.equal(r.status, 422);
  assert.deepEqual(r.json.issues.map((i) => `${i.name} ${i.code}`).sort(), ['fallback Compile.Cert.Default', 'steal Compile.Cert.HostConflict']);
});

test('a WebSocket over the TLS port reaches the upstream with X-Forwarded-Proto https and echoes', BOUNDED, async (t) => {
  const { WebSocket, WebSocketServer } = await import('ws');
  const { createServer } = await import('node:http');
  const http = createServer();
  const wss = new WebSocketServer({ server: http });
  let proto = '';
  wss.on('connection', (ws, req) => {
    proto = String(req.headers['x-forwarded-proto']);
    ws.on('message', (m, binary) => ws.send(m, { binary }));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  t.after(() => {
    wss.close();
    http.close();
  });
  const { gw, pki, tlsPort } = await tlsGateway(t);
  const target = `127.0.0.1:${(http.address() as { port: number }).port}`;
  await apply(gw, [['cert', 'a', issue(pki, ['a.test'])], ['cluster', 'ws', { targets: [target] }], ['route', 'chat', { cluster: 'ws', websocket: true }]]);
  const client = new WebSocket(`wss://127.0.0.1:${tlsPort}/chat`, { ca: pki.ca, servername: 'a.test', headers: { host: 'a.test' } });
  t.after(() => client.terminate());
  await new Promise<void>((resolve, reject) => {
    client.once('open', () => resolve());
    client.once('error', reject);
  });
  const echoed = new Promise<string>((resolve) => client.once('message', (m) => resolve(String(m))));
  client.send('over tls');
  assert.equal(await echoed, 'over tls');
  assert.equal(proto, 'https');
});

test('a WebSocket route to an https:// target speaks wss with the cluster\'s tls: refused 502 UpstreamTls until its CA is given; an http:// target works too', BOUNDED, async (t) => {
  const { WebSocket, WebSocketServer } = await import('ws');
  const { createServer: createHttps } = await import('node:https');
  const { createServer: createHttp } = await import('node:http');
  const pki = makePki(t);
  const served = issue(pki, ['localhost']);
  const secure = createHttps({ cert: served.certificate, key: served.privateKey });
  const plain = createHttp();
  for (const server of [secure, plain]) {
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => ws.on('message', (m, binary) => ws.send(m, { binary })));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => {
      wss.close();
      server.close();
    });
  }
  const port = (s: { address(): unknown }) => (s.address() as { port: number }).port;
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const wsRoute = (name: string): ['route', string, Json] => ['route', name, { cluster: name, pathPrefix: `/${name}`, websocket: true }];
  await apply(gw, [
    ['cluster', 'untrusted', { targets: [`https://localhost:${port(secure)}`] }],
    ['cluster', 'trusted', { targets: [`https://localhost:${port(secure)}`], tls: { ca: pki.ca } }],
    ['cluster', 'plain', { targets: [`http://127.0.0.1:${port(plain)}`] }],
    wsRoute('untrusted'),
    wsRoute('trusted'),
    wsRoute('plain'),
  ]);
  const echo = (path: string) =>
    new Promise<string>((resolve, reject) => {
      const c = new WebSocket(`ws://127.0.0.1:${gw.dataPort}${path}`);
      c.once('open', () => c.send('ping'));
      c.once('message', (m) => {
        resolve(String(m));
        c.close();
      });
      c.once('unexpected-response', (_q, res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d));
        res.on('end', () => resolve(`${res.statusCode} ${(JSON.parse(body) as { code: string }).code}`));
      });
      c.once('error', reject);
    });
  assert.equal(await echo('/untrusted'), '502 Svc.Data.UpstreamTls');
  assert.equal(await echo('/trusted'), 'ping');
  assert.equal(await echo('/plain'), 'ping');
});

test('TLS sessions resume (a second connection with the first one\'s session skips the full handshake); a client offering h2 is served HTTP/1.1', BOUNDED, async (t) => {
  const { gw, up, pki, tlsPort } = await tlsGateway(t);
  await apply(gw, [['cert', 'a', issue(pki, ['a.test'])], ['cluster', 'c', { targets: [up.target] }], ['route', 'all', { cluster: 'c' }]]);
  // The node engine offers h2 by ALPN (test/http2-downstream.test.ts); resumption is checked over HTTP/1.1 there.
  const onNode = process.env.SWITCHYARD_TEST_ENGINE === 'node';
  const open = (session?: Buffer, maxVersion: 'TLSv1.2' | 'TLSv1.3' = 'TLSv1.3') =>
    new Promise<{ reused: boolean; alpn: string | false; session: Buffer | undefined; head: string }>((resolve, reject) => {
      let got: Buffer | undefined;
      const s: TLSSocket = connect({ port: tlsPort, host: '127.0.0.1', servername: 'a.test', ca: pki.ca, ALPNProtocols: onNode ? ['http/1.1'] : ['h2', 'http/1.1'], maxVersion, ...(session ? { session } : {}) });
      s.on('session', (b: Buffer) => (got = b));
      s.once('secureConnect', () => {
        // A request, so a TLS 1.3 server sends its ticket before the socket closes.
        s.write('GET / HTTP/1.1\r\nHost: a.test\r\n\r\n');
        s.once('data', (d: Buffer) => {
          setTimeout(() => {
            resolve({ reused: s.isSessionReused(), alpn: s.alpnProtocol, session: got, head: d.toString('latin1', 0, 12) });
            s.destroy();
          }, 50);
        });
      });
      s.on('error', reject);
    });
  for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
    const first = await open(undefined, version);
    assert.equal(first.reused, false);
    assert.ok(first.session, `${version}: the server gave a session to resume`);
    const second = await open(first.session, version);
    t.diagnostic(`${version}: reused ${second.reused}, ALPN ${String(first.alpn)}`);
    assert.equal(second.reused, true, `${version}: the session was resumed`);
    // uWS negotiates no ALPN: a client offering h2 falls back to HTTP/1.1.
    if (!onNode) assert.notEqual(first.alpn, 'h2');
    assert.equal(first.head, 'HTTP/1.1 200');
  }
});
