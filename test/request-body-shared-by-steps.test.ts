import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

/** A POST with a chunked JSON body of about `bytes` bytes; resolves with the status. */
function postChunked(url: string, bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
    req.write('{"pad":"');
    for (let sent = 10; sent < bytes; sent += 1000) req.write('x'.repeat(1000));
    req.end('"}');
  });
}

/**
 * The request body read by steps (body-validate) is one read shared by every step and by
 * the proxy, and the route's caps hold whichever step read it first.
 */
test('steps that read the request body share one read, and body caps hold after it', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const schema = { type: 'object', required: ['name'] };
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['orch', 'both', {
      nodes: [
        { id: 'v1', step: 'body-validate', settings: { schema } },
        { id: 'v2', step: 'body-validate', settings: { schema } },
      ],
      links: [],
      groups: [{ id: 'g', nodes: ['v1', 'v2'], merge: 'all' }],
    }],
    ['orch', 'race', {
      nodes: [
        { id: 'fast', step: 'request-headers', settings: { set: { 'x-fast': '1' } } },
        { id: 'slow', step: 'body-validate', settings: { schema: { type: 'object' } } },
      ],
      links: [],
      groups: [{ id: 'g', nodes: ['fast', 'slow'], merge: 'first' }],
    }],
    ['route', 'both', { cluster: 'up', pathPrefix: '/both', steps: [{ code: 'orch', settings: { ref: 'both' } }] }],
    ['route', 'race', { cluster: 'up', pathPrefix: '/race', steps: [{ code: 'orch', settings: { ref: 'race' } }] }],
    ['route', 'capped', { cluster: 'up', pathPrefix: '/capped', steps: [
      { code: 'body-validate', settings: { schema: { type: 'object' } } },
      { code: 'request-size-limit', settings: { maxBytes: 100 } },
    ] }],
  ]);
  const body = { name: 'x', pad: 'y'.repeat(100) };
  const json = { 'content-type': 'application/json' };

  await t.test('two body-validate members of one group both see the whole body, and so does the upstream', async () => {
    // Regression: each member iterated the same stream; one got the bytes, the other an
    // empty body: a valid request got 400, and the upstream could get nothing.
    const r = await request(`${gw.dataUrl}/both`, { method: 'POST', body, headers: json });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.bodyBytes, JSON.stringify(body).length);
  });

  await t.test('merge first: a losing member still reading the body does not take it from the upstream', async () => {
    // Regression: the winner let the proxy start while the loser consumed the live stream.
    for (let i = 0; i < 5; i++) {
      const r = await request(`${gw.dataUrl}/race`, { method: 'POST', body, headers: json });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.bodyBytes, JSON.stringify(body).length, `round ${i}`);
    }
  });

  await t.test('request-size-limit after body-validate still refuses a body over its cap', async () => {
    // Regression: a body a step had buffered went upstream whole: 5 kB passed a 100-byte cap.
    const before = up.requests.filter((q) => q.url === '/capped').length;
    assert.equal(await postChunked(`${gw.dataUrl}/capped`, 5_000), 413);
    assert.equal(up.requests.filter((q) => q.url === '/capped').length, before, 'nothing reached the upstream');
    const small = await request(`${gw.dataUrl}/capped`, { method: 'POST', body: { a: 1 }, headers: json });
    assert.equal(small.status, 200, small.text);
  });
});
