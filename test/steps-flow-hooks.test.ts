import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

test('failure strategies, timeouts, concurrency caps and access logs', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const chain = (failureStrategy: string) => ({
    nodes: [
      { id: 'only-get', step: 'method-restriction', settings: { allow: ['GET'] }, failureStrategy },
      { id: 'tag', step: 'request-headers', settings: { set: { 'x-tagged': 'yes' } } },
    ],
    links: [{ from: 'only-get', to: 'tag' }],
  });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['orch', 'failfast', chain('FailFast')],
    ['orch', 'continue', chain('Continue')],
    ['route', 'ff', { cluster: 'up', pathPrefix: '/ff', steps: [{ code: 'orch', settings: { ref: 'failfast' } }] }],
    ['route', 'co', { cluster: 'up', pathPrefix: '/co', steps: [{ code: 'orch', settings: { ref: 'continue' } }] }],
    ['route', 'slow', { cluster: 'up', pathPrefix: '/slow', steps: [{ code: 'timeout', settings: { headersMs: 300 } }] }],
    ['route', 'one', { cluster: 'up', pathPrefix: '/one', steps: [{ code: 'concurrency-limit', settings: { max: 1 } }] }],
    ['route', 'logged', { cluster: 'up', pathPrefix: '/logged', steps: [{ code: 'access-log', settings: { headers: ['user-agent', 'authorization', 'x-sid'], redact: ['sid', 'x-sid'] } }] }],
  ]);
  const url = (p: string) => `${gw.dataUrl}${p}`;

  await t.test('FailFast stops the chain with the failing step’s answer; Continue logs it and goes on', async () => {
    assert.equal((await request(url('/ff'), { method: 'POST', body: 'x' })).status, 405);
    const co = await request(url('/co'), { method: 'POST', body: 'x' });
    assert.equal(co.status, 200);
    assert.equal(co.json.headers['x-tagged'], 'yes', 'the chain went on after the failed node');
    await waitFor('the Continue warning in the log', () => gw.logLines().find((l) => /failureStrategy Continue/.test(l.msg ?? '')));
  });

  await t.test('timeout: a slower upstream answer becomes 504', async () => {
    const started = Date.now();
    const r = await request(url('/slow'), { headers: { 'x-up-delay-ms': '2000' } });
    assert.equal(r.status, 504);
    assert.equal(r.json.code, 'Svc.Data.UpstreamTimeout');
    assert.ok(Date.now() - started < 1500, 'answered at the route timeout, not the upstream delay');
    assert.equal((await request(url('/slow'))).status, 200);
  });

  await t.test('timeout: a short headersMs is kept to within a few tens of milliseconds, not undici’s one-second clock', async () => {
    // Regression: undici's coarse timers let an upstream answering after 700 ms through a
    // 100 ms deadline most of the time, and a 300 ms deadline fired after about a second.
    for (let i = 0; i < 4; i++) {
      const started = Date.now();
      const r = await request(url('/slow'), { headers: { 'x-up-delay-ms': '700' } });
      const ms = Date.now() - started;
      assert.equal(r.status, 504, `round ${i}: ${r.status} after ${ms} ms`);
      assert.ok(ms < 600, `round ${i}: 504 after ${ms} ms for a 300 ms deadline`);
    }
  });

  await t.test('concurrency-limit: the second concurrent request gets 503, and the slot frees when the first ends', async () => {
    const first = request(url('/one'), { headers: { 'x-up-delay-ms': '600' } });
    await waitFor('the first request at the upstream', () => up.requests.some((r) => r.url === '/one' && !r.finished));
    const second = await request(url('/one'));
    assert.equal(second.status, 503);
    assert.equal(second.headers['retry-after'], '1');
    assert.equal((await first).status, 200);
    assert.equal((await request(url('/one'))).status, 200);
  });

  await t.test('access-log: one line per request with route, status and the chosen headers', async () => {
    await request(url('/logged/x?y=1'), { headers: { 'user-agent': 'probe/1' } });
    const line = await waitFor('the access line', () => gw.logLines().find((l) => l.access && l.path === '/logged/x'));
    assert.equal(line.route, 'default/logged');
    assert.equal(line.status, 200);
    assert.equal(line.query, 'y=1');
    assert.equal(line.headers['user-agent'], 'probe/1');
    assert.equal(typeof line.ms, 'number');
  });

  await t.test('access-log: credentials in the query and the logged headers never reach the log', async () => {
    // Regression: the raw query was logged, so `?api_key=…` (key-auth's query key) reached the log in plaintext.
    await request(url('/logged/secret?page=2&api_key=sk-live-SECRET-1&access_token=tok-SECRET-2&sid=SECRET-3&q=a+b'), {
      headers: { authorization: 'Bearer SECRET-4', 'x-sid': 'SECRET-5', 'user-agent': 'probe/2' },
    });
    const line = await waitFor('the access line', () => gw.logLines().find((l) => l.access && l.path === '/logged/secret'));
    assert.equal(line.query, 'page=2&api_key=[redacted]&access_token=[redacted]&sid=[redacted]&q=a+b');
    assert.deepEqual(line.headers, { 'user-agent': 'probe/2', authorization: '[redacted]', 'x-sid': '[redacted]' });
    assert.doesNotMatch(JSON.stringify(gw.logLines()), /SECRET/, 'no secret anywhere in the log');
  });
});
