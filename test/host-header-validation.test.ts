import { test } from 'node:test';
import { connect } from 'node:net';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { rawRequest } from './helpers/raw-http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { BOUNDED } from './helpers/wait.js';

test('a Host that is not host[:port], or two Host headers, answer 400 before routing', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'app', { targets: [up.target] }],
    ['route', 'admin', { cluster: 'app', hosts: ['admin.test'], order: 10 }],
    ['route', 'all', { cluster: 'app' }],
    ['route', 'fixed', { pathPrefix: '/fixed', directResponse: { statusCode: 200, body: 'fixed' } }],
  ]);
  const send = (hostLines: string[], path = '/x') => rawRequest(gw.dataPort, [`GET ${path} HTTP/1.1`, ...hostLines, 'Connection: close']);

  for (const host of ['admin.test', 'ADMIN.test:8080', 'admin.test.', '127.0.0.1:80', '[::1]:8080', '']) {
    const r = await send([`Host: ${host}`]);
    assert.equal(r.status, 200, `${JSON.stringify(host)}: ${r.text}`);
  }
  const before = up.requests.length;
  const invalid = ['admin.test /x', 'admin.test@evil', 'public.test, admin.test', 'public.test,admin.test', 'a:b:c', '[::1', 'host:port', 'host:', 'admin.test:99999', 'admin\ttest', 'admin.test\u007f', 'admin.test;x', '*.test'];
  for (const host of invalid) {
    for (const path of ['/x', '/fixed']) {
      const r = await send([`Host: ${host}`], path);
      assert.equal(r.status, 400, `${JSON.stringify(host)} ${path}: ${r.raw.slice(0, 200)}`);
      assert.equal(r.json.code, 'Svc.Data.BadRequest');
    }
  }
  // Two Host headers: which one routes is ambiguous (the first routed, another could be read
  // upstream). uWS refuses them itself (its own 400 and a close); the gateway's check stays
  // for a parser that would not.
  const two = await send(['Host: public.test', 'Host: admin.test']);
  assert.equal(two.status, 400, two.raw.slice(0, 200));
  assert.equal(two.headers.connection, 'close');
  assert.equal(up.requests.length, before, 'no refused request reached the upstream');

  // No Host at all: uWS answers its own 400 and closes (RFC 9112 §3.2), nothing reaches the upstream.
  const answer = await new Promise<string>((resolve) => {
    const sock = connect(gw.dataPort, '127.0.0.1', () => sock.write('GET /x HTTP/1.1\r\nConnection: close\r\n\r\n'));
    let got = '';
    sock.on('data', (c) => (got += c.toString('latin1')));
    sock.on('close', () => resolve(got));
    sock.on('error', () => resolve(got));
    sock.setTimeout(5_000, () => sock.destroy());
  });
  assert.match(answer, /^HTTP\/1\.1 400 /, 'a request without Host is refused');
  assert.equal(up.requests.length, before);
});
