import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, apply, dryRun, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED, waitFor } from './helpers/wait.js';
import { h2Upstream } from './helpers/h2-server.js';
import { makeCa } from './helpers/tls-certs.js';
import { NO_THROTTLE, issueKey } from './helpers/keys.js';

/**
 * Clusters with `protocol: "h2c"` and `"h2"` through a real gateway to node:http2
 * upstreams: what the client gets, what the upstream saw (HTTP/2, the request's head and
 * body), health probes over HTTP/2, the compile issues of a protocol that does not fit,
 * and the upstream allow-list.
 */

interface Seen {
  alpn: string;
  method: string;
  path: string;
  authority: string;
  agent: string;
  bytes: number;
}

/** An HTTP/2-only upstream (node:http2, no HTTP/1.1 fallback) answering with a digest of the body it got; /health answers 204. */
async function digestUpstream(t: { after(fn: () => unknown): void }, tls?: Parameters<typeof h2Upstream>[2]) {
  const seen: Seen[] = [];
  const up = await h2Upstream(
    t,
    (stream, headers, session) => {
      const hash = createHash('sha256');
      let bytes = 0;
      stream.on('data', (c: Buffer) => {
        bytes += c.length;
        hash.update(c);
      });
      stream.on('end', () => {
        seen.push({ alpn: String(session.alpnProtocol), method: String(headers[':method']), path: String(headers[':path']), authority: String(headers[':authority']), agent: String(headers['user-agent']), bytes });
        if (headers[':path'] === '/health') return void stream.respond({ ':status': 204 }, { endStream: true });
        stream.respond({ ':status': 200, 'content-type': 'text/plain', 'x-upstream': 'h2' });
        stream.end(`${headers[':method']} ${headers[':path']} ${bytes} ${hash.digest('hex')}`);
      });
    },
    tls,
  );
  return { up, seen };
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const api = (gw: Gateway, tenant: string, rest: string) => `${gw.adminUrl}/api/v1/${tenant}/${rest}`;

test('an h2c cluster: GET and POST (buffered and streamed bodies) reach a node:http2 upstream over HTTP/2; status, headers and body come back', BOUNDED, async (t) => {
  const { up, seen } = await digestUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'grpc', { targets: [up.target], protocol: 'h2c', requestBuffering: { maxBytes: 0 } }],
    ['route', 'r', { cluster: 'grpc', pathPrefix: '/' }],
    ['route', 'buffered', { cluster: 'grpc', pathPrefix: '/buffered', requestBuffering: { maxBytes: 65536 } }],
  ]);
  const get = await request(`${gw.dataUrl}/things?x=1`, { headers: { host: 'api.example' } });
  assert.equal(get.status, 200, get.text);
  assert.equal(get.headers['x-upstream'], 'h2');
  assert.equal(get.text, `GET /things?x=1 0 ${sha(Buffer.alloc(0))}`);
  assert.deepEqual([seen[0]!.alpn, seen[0]!.authority], ['h2c', 'api.example'], 'prior knowledge; Host became :authority');

  // maxBytes 0: the body streams from its first byte (request-buffer.ts), through the stream's flow control.
  const big = Buffer.alloc(3 * 1024 * 1024, 'abcdefgh');
  const post = await request(`${gw.dataUrl}/upload`, { method: 'POST', body: big, timeoutMs: 20_000 });
  assert.equal(post.status, 200, post.text);
  assert.equal(post.text, `POST /upload ${big.length} ${sha(big)}`);
  const small = Buffer.from('read whole first');
  const whole = await request(`${gw.dataUrl}/buffered`, { method: 'POST', body: small });
  assert.equal(whole.text, `POST /buffered ${small.length} ${sha(small)}`);
  assert.equal(up.sessions.length, 1, 'every request on one HTTP/2 connection');
});

test('an h2 cluster over TLS: ALPN h2 with the cluster ca, the answer relayed; its health checks probe over HTTP/2 too', BOUNDED, async (t) => {
  const ca = makeCa('h2 upstream CA');
  const { up, seen } = await digestUpstream(t, { tls: ca.issue('upstream', ['IP:127.0.0.1'], 'server') });
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'secure', { targets: [up.target], protocol: 'h2', tls: { ca: ca.cert }, healthCheck: { path: '/health', intervalMs: 200 } }],
    ['route', 'r', { cluster: 'secure', pathPrefix: '/' }],
  ]);
  const r = await request(`${gw.dataUrl}/over-tls`, { method: 'PUT', body: 'payload' });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.text, `PUT /over-tls 7 ${sha(Buffer.from('payload'))}`);
  const call = seen.find((s) => s.path === '/over-tls')!;
  assert.equal(call.alpn, 'h2');

  const probe = await waitFor('a health probe', () => seen.find((s) => s.path === '/health'));
  assert.deepEqual([probe.alpn, probe.method, probe.agent], ['h2', 'GET', 'switchyard-health-check']);
  const health = await waitFor('the target checked healthy', async () => {
    const h = await request(api(gw, 'default', 'clusters/secure/health'), { token: gw.tokens.root });
    const target = (h.json as { targets: { state: string; successes: number }[] }).targets[0]!;
    return target.successes > 0 ? target : undefined;
  });
  assert.equal(health.state, 'healthy');
});

test('dry-run refuses a protocol its targets do not fit and a websocket route to an HTTP/2 cluster (422, with pointers)', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await setEntity(gw, 'cluster', 'plain-h2', { targets: ['127.0.0.1:9', 'https://127.0.0.1:10'], protocol: 'h2' });
  await setEntity(gw, 'cluster', 'tls-h2c', { targets: [{ address: 'https://127.0.0.1:11', weight: 2 }], protocol: 'h2c' });
  await setEntity(gw, 'route', 'ws', { cluster: 'tls-h2c', pathPrefix: '/ws', websocket: true });
  const dry = await dryRun(gw);
  assert.equal(dry.status, 422, dry.text);
  assert.deepEqual(
    dry.json.issues.map((i) => `${i.kind}/${i.name} ${i.pointer} ${i.code}`).sort(),
    ['cluster/plain-h2 /targets/0 Compile.Cluster.Protocol', 'cluster/tls-h2c /targets/0/address Compile.Cluster.Protocol', 'route/ws /websocket Compile.Route.WebSocket'],
  );
  const bad = await request(api(gw, 'default', 'config/set/cluster/x'), { method: 'POST', token: gw.tokens.root, body: { targets: ['127.0.0.1:1'], protocol: 'http2' } });
  assert.equal(bad.status, 400, bad.text);
  assert.equal((bad.json as { errors: { path: string }[] }).errors[0]!.path, '/protocol');
});

test("the upstream allow-list holds for h2c clusters: a tenant's loopback target is refused at compile time, a name resolving to the admin port when connecting", BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: NO_THROTTLE });
  const { up, seen } = await digestUpstream(t);
  const sub = await issueKey(gw, gw.tokens.root!, 'acme', { name: 'ci', scopes: ['config:*', 'publish:*'] });
  const set = (kind: string, name: string, doc: unknown) => request(api(gw, 'acme', `config/set/${kind}/${name}`), { method: 'POST', token: sub.token, body: doc });
  assert.equal((await set('cluster', 'h2', { targets: [up.target], protocol: 'h2c' })).status, 200);
  assert.equal((await set('route', 'r', { hosts: ['acme.example'], pathPrefix: '/', cluster: 'h2' })).status, 200);
  const dry = await request(api(gw, 'acme', 'publish/dry-run'), { method: 'POST', token: sub.token });
  assert.equal(dry.status, 422, dry.text);
  assert.deepEqual((dry.json as { issues: { pointer: string; code: string }[] }).issues.map((i) => `${i.pointer} ${i.code}`), ['/targets/0 Compile.Cluster.TargetDenied']);

  await apply(gw, [
    ['cluster', 'self', { targets: [`localhost:${gw.adminPort}`], protocol: 'h2c' }],
    ['route', 'self', { pathPrefix: '/self', cluster: 'self' }],
  ]);
  const refused = await request(`${gw.dataUrl}/self`);
  assert.equal(refused.status, 502, refused.text);
  assert.equal((refused.json as { code: string }).code, 'Svc.Data.UpstreamDenied');
  assert.equal(seen.length, 0);
});

test('a reused HTTP/2 connection that the upstream drops under an idempotent request: the gateway re-sends it on a new connection, the client never knows', BOUNDED, async (t) => {
  const served = new Map<unknown, number>();
  const paths: string[] = [];
  const up = await h2Upstream(t, (stream, headers, session) => {
    paths.push(String(headers[':path']));
    const n = (served.get(session) ?? 0) + 1;
    served.set(session, n);
    // The second request of a connection finds it gone (the upstream restarted, say).
    if (n === 2) return void session.destroy();
    stream.respond({ ':status': 200 });
    stream.end(`answer ${n} on connection ${served.size}`);
  });
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'c', { targets: [up.target], protocol: 'h2c' }],
    ['route', 'r', { cluster: 'c', pathPrefix: '/' }],
  ]);
  assert.equal((await request(`${gw.dataUrl}/warm`)).text, 'answer 1 on connection 1');
  const r = await request(`${gw.dataUrl}/again`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.text, 'answer 1 on connection 2');
  assert.deepEqual(paths, ['/warm', '/again', '/again']);
  // A POST is never sent twice: its client gets the failure (/warm2 leaves connection 3 with one request served).
  assert.equal((await request(`${gw.dataUrl}/warm2`)).text, 'answer 1 on connection 3');
  const post = await request(`${gw.dataUrl}/post`, { method: 'POST', body: 'once' });
  assert.equal(post.status, 502, post.text);
  assert.equal((post.json as { code: string }).code, 'Svc.Data.UpstreamUnreachable');
  assert.equal(paths.filter((p) => p === '/post').length, 1);
});

test("mirror copies to an h2c cluster reach it over HTTP/2; the main request's answer is the main cluster's", BOUNDED, async (t) => {
  const { up: main } = await digestUpstream(t);
  const { up: shadow, seen: copies } = await digestUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'main', { targets: [main.target], protocol: 'h2c' }],
    ['cluster', 'shadow', { targets: [shadow.target], protocol: 'h2c' }],
    ['route', 'r', { cluster: 'main', pathPrefix: '/', steps: [{ code: 'mirror', settings: { cluster: 'shadow' } }] }],
  ]);
  const r = await request(`${gw.dataUrl}/copied`);
  assert.equal(r.status, 200, r.text);
  assert.match(r.text, /^GET \/copied 0 /);
  const copy = await waitFor('the mirror copy', () => copies.find((s) => s.path === '/copied'));
  assert.equal(copy.alpn, 'h2c');
});
