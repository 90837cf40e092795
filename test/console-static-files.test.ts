/** The admin port serves the built console under /console/, and nothing outside it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

test('console files: index for views, hashed assets, security headers, no traversal', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [{ id: 'root', scopes: ['*'] }] });
  const index = await request(`${gw.adminUrl}/console/`);
  assert.equal(index.status, 200);
  assert.match(index.headers['content-type'] as string, /^text\/html/);
  assert.match(index.text, /<div id="root">/);
  assert.match(index.headers['content-security-policy'] as string, /default-src 'self'/);
  assert.equal(index.headers['x-frame-options'], 'DENY');

  const deep = await request(`${gw.adminUrl}/console/routes/api`);
  assert.equal(deep.status, 200, 'a view path without extension gets the app');
  assert.equal(deep.text, index.text);

  const asset = /src="\/console\/(assets\/[^"]+\.js)"/.exec(index.text)?.[1];
  assert.ok(asset, 'index.html references a hashed script');
  const js = await request(`${gw.adminUrl}/console/${asset}`);
  assert.equal(js.status, 200);
  assert.match(js.headers['content-type'] as string, /javascript/);
  assert.match(js.headers['cache-control'] as string, /immutable/);

  assert.equal((await request(`${gw.adminUrl}/console`)).status, 308);
  assert.equal((await request(`${gw.adminUrl}/console/missing.js`)).status, 404);
  for (const p of ['/console/..%2f..%2fpackage.json', '/console/%2e%2e/%2e%2e/package.json', '/console/assets/..%2f..%2f..%2fworker.json']) {
    const r = await request(`${gw.adminUrl}${p}`);
    assert.ok(r.status === 404 || (r.status === 200 && r.text === index.text), `${p}: ${r.status} ${r.text.slice(0, 80)}`);
    assert.ok(!r.text.includes('"dependencies"'), `${p} must not leak files`);
  }
  const post = await request(`${gw.adminUrl}/console/`, { method: 'POST', body: {} });
  assert.equal(post.status, 405);
  assert.equal(post.json.code, 'Svc.Request.MethodNotAllowed');
});
