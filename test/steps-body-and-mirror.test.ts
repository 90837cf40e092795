import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { rawRequest } from './helpers/raw-http.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

const TREE = { $ref: '#/definitions/node', definitions: { node: { type: 'object', properties: { child: { $ref: '#/definitions/node' } } } } };

test('body-validate and mirror', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const shadow = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const schema = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 }, age: { type: 'integer' } }, additionalProperties: false };
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['cluster', 'shadow', { targets: [shadow.target] }],
    ['route', 'validated', { cluster: 'up', pathPrefix: '/users', steps: [{ code: 'body-validate', settings: { schema, maxBytes: 200 } }] }],
    ['route', 'mirrored', { cluster: 'up', pathPrefix: '/m', steps: [{ code: 'mirror', settings: { cluster: 'shadow' } }] }],
    ['route', 'tree', { cluster: 'up', pathPrefix: '/tree', steps: [{ code: 'body-validate', settings: { schema: TREE } }] }],
    ['route', 'formats', { cluster: 'up', pathPrefix: '/formats', steps: [{ code: 'body-validate', settings: { schema: { type: 'object', properties: { email: { type: 'string', format: 'email' }, id: { type: 'string', format: 'uuid' } } } } }] }],
  ]);
  const post = (body: string, type = 'application/json') => request(`${gw.dataUrl}/users`, { method: 'POST', body, headers: { 'content-type': type } });

  await t.test('a valid body reaches the upstream byte for byte', async () => {
    const body = '{"name":"Ada","age":36}';
    const r = await post(body);
    assert.equal(r.status, 200);
    assert.equal(r.json.bodyBytes, Buffer.byteLength(body));
  });

  await t.test('violations are 400 with pointers; not JSON 400; wrong type 415; too large 413', async () => {
    const bad = await post('{"age":"x","extra":1}');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.code, 'Svc.Data.BodyInvalid');
    assert.ok(bad.json.violations.length >= 2, JSON.stringify(bad.json));
    assert.ok(bad.json.violations.some((x: { pointer: string }) => x.pointer === '/age'));
    assert.equal((await post('{nope')).status, 400);
    assert.equal((await post('{"name":"a"}', 'text/plain')).status, 415);
    assert.equal((await post(JSON.stringify({ name: 'x'.repeat(300) }))).status, 413);
  });

  await t.test('a recursive schema and a deeply nested body: 400, not 500', async () => {
    // Regression: ajv's validator recursed with the body until the stack ran out (500 Svc.Internal).
    const deep = '{"child":'.repeat(20_000) + '{}' + '}'.repeat(20_000);
    const r = await request(`${gw.dataUrl}/tree`, { method: 'POST', body: deep, headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.code, 'Svc.Data.BodyInvalid');
    const shallow = await request(`${gw.dataUrl}/tree`, { method: 'POST', body: '{"child":{"child":{}}}', headers: { 'content-type': 'application/json' } });
    assert.equal(shallow.status, 200, shallow.text);
  });

  await t.test('format keywords are checked (email, uuid, …)', async () => {
    // Regression: ajv without its formats ignored `format`, and any string passed.
    const send = (doc: unknown) => request(`${gw.dataUrl}/formats`, { method: 'POST', body: JSON.stringify(doc), headers: { 'content-type': 'application/json' } });
    const bad = await send({ email: 'not an email', id: '<script>' });
    assert.equal(bad.status, 400, bad.text);
    assert.deepEqual(bad.json.violations.map((v: { pointer: string }) => v.pointer).sort(), ['/email', '/id']);
    assert.equal((await send({ email: 'ada@example.com', id: '6f1c2f0e-8a55-4c1e-9d8f-2a7f8f1e2b3c' })).status, 200);
  });

  await t.test('mirror: the shadow cluster gets a copy; the client gets the main answer', async () => {
    const before = shadow.requests.length;
    const r = await request(`${gw.dataUrl}/m/item?id=7`, { headers: { 'x-tag': 't1' } });
    assert.equal(r.status, 200);
    assert.equal(r.json.url, '/m/item?id=7');
    const copy = await waitFor('the mirrored copy', () => shadow.requests.slice(before).find((q) => q.url === '/m/item?id=7'));
    assert.equal(copy.headers['x-tag'], 't1');
    // Regressions: a Content-Length: 0 request was taken for one with a body and not copied;
    // copies carried the client's X-Forwarded-For as written, not the gateway's (the peer alone).
    const zero = await rawRequest(gw.dataPort, ['DELETE /m/zero HTTP/1.1', 'Host: x', 'Content-Length: 0', 'X-Forwarded-For: 6.6.6.6', 'Connection: close']);
    assert.equal(zero.status, 200);
    const copied = await waitFor('the copy of the Content-Length: 0 request', () => shadow.requests.find((q) => q.url === '/m/zero'));
    assert.equal(copied.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(copied.headers['x-forwarded-proto'], 'http');
  });
});

test('mirror: copies to a mirror that never answers stop at maxInFlight; the main requests are not held', BOUNDED, async (t) => {
  // Regression: copies to a silent mirror took all of the cluster's connections, then
  // piled up in the worker without bound and went out seconds after their requests.
  const up = await startUpstream(t);
  const received: string[] = [];
  const silent = createServer((req) => void received.push(req.url ?? '')); // never answers
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.after(() => {
    silent.closeAllConnections();
    return new Promise((r) => silent.close(r));
  });
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['cluster', 'silent', { targets: [`127.0.0.1:${(silent.address() as AddressInfo).port}`] }],
    ['route', 'm', { cluster: 'up', pathPrefix: '/m', steps: [{ code: 'mirror', settings: { cluster: 'silent', maxInFlight: 3 } }] }],
  ]);
  for (let i = 0; i < 20; i++) assert.equal((await request(`${gw.dataUrl}/m/${i}`)).status, 200);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(received, ['/m/0', '/m/1', '/m/2'], 'three copies on their way; the rest were dropped, not queued');
});
