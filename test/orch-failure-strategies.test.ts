import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

/**
 * What `failureStrategy: Continue` and the `any` merge let through: failures, never a
 * step's success answer. Regression: both treated every answer as a failure, so a
 * granted CORS preflight went to the upstream without its CORS headers and a cache
 * never served a hit.
 */
test('Continue and any groups pass over failures, not over a step’s success answer', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const cors = { origins: ['https://app.example'] };
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['orch', 'cors-continue', { nodes: [{ id: 'c', step: 'cors', settings: cors, failureStrategy: 'Continue' }], links: [] }],
    ['orch', 'cors-any', { nodes: [{ id: 'c', step: 'cors', settings: cors }, { id: 'r', step: 'request-id', settings: {} }], links: [], groups: [{ id: 'g', nodes: ['c', 'r'], merge: 'any' }] }],
    ['orch', 'cache-continue', { nodes: [{ id: 'k', step: 'cache', settings: { ttlSeconds: 60 }, failureStrategy: 'Continue' }], links: [] }],
    ['orch', 'deny-continue', { nodes: [{ id: 'm', step: 'method-restriction', settings: { allow: ['GET'] }, failureStrategy: 'Continue' }], links: [] }],
    ['route', 'cont', { cluster: 'up', pathPrefix: '/cont', steps: [{ code: 'orch', settings: { ref: 'cors-continue' } }] }],
    ['route', 'any', { cluster: 'up', pathPrefix: '/any', steps: [{ code: 'orch', settings: { ref: 'cors-any' } }] }],
    ['route', 'cache', { cluster: 'up', pathPrefix: '/cache', steps: [{ code: 'orch', settings: { ref: 'cache-continue' } }] }],
    ['route', 'deny', { cluster: 'up', pathPrefix: '/deny', steps: [{ code: 'orch', settings: { ref: 'deny-continue' } }] }],
  ]);
  const preflight = { origin: 'https://app.example', 'access-control-request-method': 'PUT' };

  for (const path of ['/cont', '/any']) {
    const before = up.requests.length;
    const r = await request(`${gw.dataUrl}${path}`, { method: 'OPTIONS', headers: preflight });
    assert.equal(r.status, 204, `${path}: ${r.status} ${r.text}`);
    assert.equal(r.headers['access-control-allow-origin'], 'https://app.example', path);
    assert.equal(up.requests.length, before, `${path}: the granted preflight reached the upstream`);
  }

  const first = await request(`${gw.dataUrl}/cache/x`);
  assert.equal(first.headers['x-cache'], 'MISS');
  const before = up.requests.length;
  const second = await request(`${gw.dataUrl}/cache/x`);
  assert.equal(second.status, 200);
  assert.equal(second.headers['x-cache'], 'HIT');
  assert.equal(up.requests.length, before, 'the cache hit went to the upstream');

  // A failure under Continue still goes on to the upstream.
  const denied = await request(`${gw.dataUrl}/deny`, { method: 'DELETE' });
  assert.equal(denied.status, 200, denied.text);
  assert.equal(up.requests.at(-1)?.method, 'DELETE');
});

/**
 * Regression: a step that reads the body with a smaller limit than the body (body-validate
 * maxBytes) destroyed it when it went over, also when that step's failure did not count
 * (Continue, a member of an `any` group another member passed, a losing `first` member):
 * the upstream got nothing and the client 502 Svc.Data.UpstreamUnreachable.
 */
test('a body over the limit of a step whose failure does not count still reaches the upstream whole', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const bv = { schema: { type: 'object' }, maxBytes: 10 };
  const hdr = { set: { 'x-h': '1' } };
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['orch', 'cont', { nodes: [{ id: 'v', step: 'body-validate', settings: bv, failureStrategy: 'Continue' }], links: [] }],
    ['orch', 'any', { nodes: [{ id: 'v', step: 'body-validate', settings: bv }, { id: 'h', step: 'request-headers', settings: hdr }], links: [], groups: [{ id: 'g', nodes: ['v', 'h'], merge: 'any' }] }],
    ['orch', 'first', { nodes: [{ id: 'h', step: 'request-headers', settings: hdr }, { id: 'v', step: 'body-validate', settings: bv }], links: [], groups: [{ id: 'g', nodes: ['h', 'v'], merge: 'first' }] }],
    ['route', 'cont', { cluster: 'up', pathPrefix: '/cont', steps: [{ code: 'orch', settings: { ref: 'cont' } }] }],
    ['route', 'any', { cluster: 'up', pathPrefix: '/any', steps: [{ code: 'orch', settings: { ref: 'any' } }] }],
    ['route', 'first', { cluster: 'up', pathPrefix: '/first', steps: [{ code: 'orch', settings: { ref: 'first' } }] }],
    ['route', 'strict', { cluster: 'up', pathPrefix: '/strict', steps: [{ code: 'body-validate', settings: bv }, { code: 'request-size-limit', settings: { maxBytes: 100_000 } }] }],
  ]);
  // Large enough to arrive in several chunks: the rest follows what the step read.
  const body = JSON.stringify({ hello: 'x'.repeat(200_000) });
  for (const path of ['/cont', '/any', '/first']) {
    const before = up.requests.length;
    const r = await request(`${gw.dataUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal(r.status, 200, `${path}: ${r.text}`);
    const seen = up.requests.slice(before);
    assert.equal(seen.length, 1, path);
    assert.equal(seen[0]!.bodyBytes, Buffer.byteLength(body), `${path}: the upstream got the whole body`);
  }
  // When the failure counts, the step answers as before.
  const strict = await request(`${gw.dataUrl}/strict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(strict.status, 413, strict.text);
});

/**
 * Regression: `all` and `any` groups waited for every member, so an `any` of key-auth
 * and a forward-auth held every key-authenticated request until the auth service
 * answered (or timed out), and an `all` held its 401 the same way. The service here
 * never answers while the test runs: each answer below arrives with its call unanswered.
 */
test('all settles at its first failure and any at its first passing member in node order, without waiting for the rest', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  /** An auth service that answers only when told to (or when the test ends). */
  const holdingService = async () => {
    const held: ServerResponse[] = [];
    const server = createServer((_req, res) => void held.push(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    });
    return { held, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
  };
  const [forAll, forAny, forAnyFa] = [await holdingService(), await holdingService(), await holdingService()];
  const key = { id: 'k', step: 'key-auth', settings: { keys: [{ id: 'app', sha256: createHash('sha256').update('good-key').digest('hex') }] } };
  const fa = (url: string) => ({ id: 'f', step: 'forward-auth', settings: { url, upstreamHeaders: ['x-user-id'], timeoutMs: 30_000 } });
  const group = (merge: string, nodes: { id: string }[]) => ({ nodes, links: [], groups: [{ id: 'g', nodes: nodes.map((n) => n.id), merge }] });
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['orch', 'all', group('all', [key, fa(forAll.url)])],
    ['orch', 'any-key-first', group('any', [key, fa(forAny.url)])],
    ['orch', 'any-fa-first', group('any', [fa(forAnyFa.url), key])],
    ['route', 'all', { cluster: 'up', pathPrefix: '/all', steps: [{ code: 'orch', settings: { ref: 'all' } }] }],
    ['route', 'any', { cluster: 'up', pathPrefix: '/any', steps: [{ code: 'orch', settings: { ref: 'any-key-first' } }] }],
    ['route', 'any-fa', { cluster: 'up', pathPrefix: '/any-fa', steps: [{ code: 'orch', settings: { ref: 'any-fa-first' } }] }],
  ]);

  const all = await request(`${gw.dataUrl}/all`, { timeoutMs: 10_000 });
  assert.equal(all.status, 401, all.text);

  const any = await request(`${gw.dataUrl}/any`, { headers: { 'x-api-key': 'good-key' }, timeoutMs: 10_000 });
  assert.equal(any.status, 200, any.text);
  assert.equal(any.json.headers['x-consumer-id'], 'app');
  assert.equal(any.json.headers['x-user-id'], undefined);
  assert.ok([...forAll.held, ...forAny.held].every((r) => !r.headersSent), 'both answers came while the auth service had not answered');

  // Node order decides, not speed: forward-auth is first here, so its verdict is awaited.
  const slow = request(`${gw.dataUrl}/any-fa`, { headers: { 'x-api-key': 'good-key' }, timeoutMs: 10_000 });
  await waitFor('the call to the auth service', () => forAnyFa.held.length >= 1 || undefined);
  forAnyFa.held[0]!.writeHead(200, { 'x-user-id': 'from-fa' }).end();
  const r = await slow;
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.headers['x-user-id'], 'from-fa');
  assert.equal(r.json.headers['x-consumer-id'], undefined, 'only the deciding member’s changes apply');
});

/**
 * Regression: group members shared the request's `vars`, so a member that failed still
 * named its consumer to the steps after the group (echo, cache's key, access-log).
 */
test('a group member that does not count leaves no vars behind; the one that counts does', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const sha = createHash('sha256').update('good-key').digest('hex');
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    // Member a: key-auth passes (sets the consumer), then a deny-all fails the member.
    ['orch', 'key-then-deny', { nodes: [
      { id: 'k', step: 'key-auth', settings: { keys: [{ id: 'app', sha256: sha }] } },
      { id: 'd', step: 'ip-restriction', settings: { deny: ['0.0.0.0/0', '::/0'] } },
    ], links: [{ from: 'k', to: 'd' }] }],
    ['orch', 'grouped', {
      nodes: [
        { id: 'a', step: 'orch', settings: { ref: 'key-then-deny' } },
        { id: 'b', step: 'request-id', settings: {} },
        { id: 'e', step: 'echo', settings: {} },
      ],
      links: [{ from: 'g', to: 'e' }],
      groups: [{ id: 'g', nodes: ['a', 'b'], merge: 'any' }],
    }],
    ['route', 'r', { cluster: 'up', pathPrefix: '/r', steps: [{ code: 'orch', settings: { ref: 'grouped' } }] }],
  ]);
  const r = await request(`${gw.dataUrl}/r`, { headers: { 'x-api-key': 'good-key' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.vars.consumer, undefined, `the failed member's consumer leaked: ${JSON.stringify(r.json.vars)}`);
  assert.equal(typeof r.json.vars.requestId, 'string', 'the passing member’s vars apply');
});

/**
 * Regressions found by a review of the group and body changes above:
 *  - an `all` group settled at a cache hit before its auth member refused, serving a
 *    signed-in user's answer to anyone;
 *  - members writing their own copy of `vars` hid key-auth's consumer from a cache
 *    sibling, which then served one consumer's answer to another;
 *  - forward-auth's 302 to a login page counted as a success answer, so `any` and
 *    `Continue` sent keyed API clients to the login page;
 *  - after a Continue step went past its body limit, a later step with a larger limit got 413;
 *  - a member still running after its `any` group settled paused the upload the proxy was sending.
 */
test('groups and Continue: a cache hit waits for auth, siblings share the consumer, a redirect is a refusal, a paused body is read on', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const sso = createServer((req, res) => {
    if (String(req.headers.cookie ?? '').includes('sso=ok')) res.writeHead(200, { 'x-user-id': 'sso-user' }).end();
    else res.writeHead(302, { location: 'https://sso.example/login' }).end();
  });
  await new Promise<void>((r) => sso.listen(0, '127.0.0.1', r));
  t.after(() => {
    sso.closeAllConnections();
    return new Promise((r) => sso.close(r));
  });
  const ssoUrl = `http://127.0.0.1:${(sso.address() as AddressInfo).port}/`;
  const sha = (k: string) => createHash('sha256').update(k).digest('hex');
  const keyAuth = { id: 'k', step: 'key-auth', settings: { keys: [{ id: 'alice', sha256: sha('alice-key') }, { id: 'bob', sha256: sha('bob-key') }] } };
  const fa = { id: 'f', step: 'forward-auth', settings: { url: ssoUrl, requestHeaders: ['cookie'], upstreamHeaders: ['x-user-id'] } };
  const cache = { id: 'c', step: 'cache', settings: { ttlSeconds: 60 } };
  const group = (merge: string, nodes: { id: string }[]) => ({ nodes, links: [], groups: [{ id: 'g', nodes: nodes.map((n) => n.id), merge }] });
  const bv = (maxBytes: number, extra = {}) => ({ code: 'body-validate', settings: { schema: { type: 'object' }, maxBytes }, ...extra });
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['orch', 'sso-cache', group('all', [fa, cache])],
    ['orch', 'key-cache', group('all', [keyAuth, cache])],
    ['orch', 'sso-or-key', group('any', [fa, keyAuth])],
    ['orch', 'sso-continue', { nodes: [{ ...fa, failureStrategy: 'Continue' }], links: [] }],
    ['orch', 'bv-continue', { nodes: [{ id: 'v', step: 'body-validate', settings: { schema: { type: 'object' }, maxBytes: 100 }, failureStrategy: 'Continue' }], links: [] }],
    ['orch', 'slow-reader', { nodes: [{ id: 'd', step: 'fault-injection', settings: { delay: { percent: 100, ms: 300 } } }, { id: 'v', step: 'body-validate', settings: { schema: { type: 'object' }, maxBytes: 100 } }], links: [{ from: 'd', to: 'v' }] }],
    ['orch', 'any-late-reader', group('any', [{ id: 'h', step: 'request-headers', settings: { set: { 'x-h': '1' } } }, { id: 's', step: 'orch', settings: { ref: 'slow-reader' } }])],
    ['route', 'sso-cache', { cluster: 'up', pathPrefix: '/sso-cache', steps: [{ code: 'orch', settings: { ref: 'sso-cache' } }] }],
    ['route', 'key-cache', { cluster: 'up', pathPrefix: '/key-cache', steps: [{ code: 'orch', settings: { ref: 'key-cache' } }] }],
    ['route', 'sso-or-key', { cluster: 'up', pathPrefix: '/sso-or-key', steps: [{ code: 'orch', settings: { ref: 'sso-or-key' } }] }],
    ['route', 'sso-continue', { cluster: 'up', pathPrefix: '/sso-continue', steps: [{ code: 'orch', settings: { ref: 'sso-continue' } }] }],
    ['route', 'two-readers', { cluster: 'up', pathPrefix: '/two-readers', steps: [{ code: 'orch', settings: { ref: 'bv-continue' } }, bv(10_000)] }],
    ['route', 'late-reader', { cluster: 'up', pathPrefix: '/late-reader', steps: [{ code: 'orch', settings: { ref: 'any-late-reader' } }] }],
  ]);
  const get = (path: string, headers: Record<string, string> = {}) => request(`${gw.dataUrl}${path}`, { headers });

  const signedIn = await get('/sso-cache/page', { cookie: 'sso=ok' });
  assert.equal(signedIn.status, 200, signedIn.text);
  assert.equal(signedIn.headers['x-cache'], 'MISS');
  const anonymous = await get('/sso-cache/page');
  assert.equal(anonymous.status, 302, 'the auth member refuses before a cache hit counts');

  const alice = await get('/key-cache/me', { 'x-api-key': 'alice-key' });
  assert.equal(alice.json.headers['x-consumer-id'], 'alice');
  const bob = await get('/key-cache/me', { 'x-api-key': 'bob-key' });
  assert.equal(bob.headers['x-cache'], 'MISS', 'the cache keys by the consumer its sibling named');
  assert.equal(bob.json.headers['x-consumer-id'], 'bob');

  const keyed = await get('/sso-or-key', { 'x-api-key': 'alice-key' });
  assert.equal(keyed.status, 200, `a valid key passes although the SSO member redirects: ${keyed.status}`);
  assert.equal(keyed.json.headers['x-consumer-id'], 'alice');
  const continued = await get('/sso-continue');
  assert.equal(continued.status, 200, 'Continue passes over the redirect');

  const body612 = JSON.stringify({ pad: 'x'.repeat(600) });
  const two = await request(`${gw.dataUrl}/two-readers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body612 });
  assert.equal(two.status, 200, two.text);
  assert.equal(up.requests.at(-1)!.bodyBytes, Buffer.byteLength(body612));

  const body3000 = JSON.stringify({ pad: 'y'.repeat(3000) });
  const late = await request(`${gw.dataUrl}/late-reader`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body3000, timeoutMs: 8_000 });
  assert.equal(late.status, 200, late.text);
  assert.equal(up.requests.at(-1)!.bodyBytes, Buffer.byteLength(body3000));
});
