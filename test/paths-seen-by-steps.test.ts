import { test } from 'node:test';
import { createServer } from 'node:http';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startGateway } from './helpers/gateway.js';
import { rawRequest } from './helpers/raw-http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

// Every consumer reads the one normalised path: forward-auth's X-Forwarded-Uri (the target as
// the upstream gets it), access-log, echo (the request as the upstream would get it),
// path-rewrite and the upstream itself.
test('steps see the normalised path the route was chosen on, and the upstream receives it', BOUNDED, async (t) => {
  const asked: string[] = [];
  const auth = createServer((req, res) => {
    asked.push(String(req.headers['x-forwarded-uri']));
    res.end();
  });
  await new Promise<void>((r) => auth.listen(0, '127.0.0.1', r));
  t.after(() => {
    auth.closeAllConnections();
    auth.close();
  });
  const authUrl = `http://127.0.0.1:${(auth.address() as { port: number }).port}/verify`;
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'guarded', { cluster: 'up', pathPrefix: '/guarded', steps: [{ code: 'forward-auth', settings: { url: authUrl } }, { code: 'access-log', settings: {} }] }],
    ['route', 'echo', { cluster: 'up', pathPrefix: '/echo', steps: [{ code: 'echo', settings: {} }] }],
    ['route', 'rw', { cluster: 'up', pathPrefix: '/rw', steps: [{ code: 'path-rewrite', settings: { stripPrefix: '/rw' } }] }],
    ['route', 'keyed', { cluster: 'up', pathPrefix: '/keyed', steps: [KEY_AUTH, { code: 'path-rewrite', settings: { stripPrefix: '/keyed' } }, { code: 'forward-auth', settings: { url: authUrl } }] }],
  ]);
  const send = (target: string) => rawRequest(gw.dataPort, [`GET ${target} HTTP/1.1`, 'Host: x', 'Connection: close']);

  const g = await send('/x/../guarded/%61b%2dc/./d?q=%2e%2e');
  assert.equal(g.status, 200, g.text);
  assert.equal(g.json.url, '/guarded/ab-c/d?q=%2e%2e');
  assert.deepEqual(asked, ['/guarded/ab-c/d?q=%2e%2e']);
  const logged = await waitFor('the access-log line', () => gw.logLines().find((l) => l.access === true && l.route === 'default/guarded'));
  assert.equal(logged.path, '/guarded/ab-c/d');

  const e = await send('//echo/%7Ea/b/..');
  assert.equal(e.status, 200, e.text);
  assert.equal(e.json.path, '/echo/~a/');

  const r = await send('/rw/%2E%2E/rw/%61pi//v1');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.url, '/api/v1');

  // Regression: X-Forwarded-Uri was the client's target, so the service judged the key
  // key-auth had stripped and a path the upstream never received.
  asked.length = 0;
  const k = await send('/keyed/a?api_key=MINE&x=1');
  assert.equal(k.status, 200, k.text);
  assert.equal(k.json.url, '/a?x=1');
  assert.deepEqual(asked, ['/a?x=1'], 'forward-auth is told the target the upstream receives');
});

const KEY_AUTH = { code: 'key-auth', settings: { query: 'api_key', keys: [{ id: 'mine', sha256: createHash('sha256').update('MINE').digest('hex') }] } };
