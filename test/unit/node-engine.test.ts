import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request as h1Request, Agent } from 'node:http';
import { connect as h2Connect } from 'node:http2';
import { promisify } from 'node:util';
import { makeCa } from '../helpers/tls-certs.js';
import { startEngine, type Running } from '../helpers/fake-engine-handlers.js';

const run = promisify(execFile);
const curl = async (args: string[]): Promise<string> => (await run('curl', ['-s', '-m', '5', ...args])).stdout;

function get(r: Running, path: string, agent: Agent): Promise<{ status: number; body: string; headers: Record<string, unknown>; local: number }> {
  return new Promise((resolve, reject) => {
    const req = h1Request({ host: '127.0.0.1', port: r.port, path, agent }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers, local: req.socket!.localPort! }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('HTTP/1.1: keep-alive answers, the id echo, one connection counted', async (t) => {
  const r = await startEngine({});
  t.after(() => r.engine.stopAccepting());
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const a = await get(r, '/hello?x=1', agent);
  const b = await get(r, '/hello', agent);
  assert.equal(a.status, 200);
  assert.equal(a.body, 'hi');
  assert.equal(a.headers['x-request-id'], 'rid-1');
  assert.equal(a.headers['x-proto'], '1.1');
  assert.equal(a.headers['x-query'], 'x=1');
  assert.equal(b.headers['x-query'], '-');
  assert.equal(a.local, b.local, 'the second request reused the connection');
  assert.equal(r.engine.connections, 1);
  const echo = await curl(['--http1.1', '-d', 'body bytes', `http://127.0.0.1:${r.port}/echo`]);
  assert.equal(echo, 'body bytes');
});

test('h2c: prior knowledge and HTTP/1.1 on the same port', async (t) => {
  const r = await startEngine({ h2c: true });
  t.after(() => r.engine.stopAccepting());
  const h2 = await curl(['--http2-prior-knowledge', '-i', `http://127.0.0.1:${r.port}/hello`]);
  assert.match(h2, /^HTTP\/2 200/);
  assert.match(h2, /x-proto: h2/);
  assert.match(h2, /x-host: 127\.0\.0\.1:\d+/, ':authority is given as host');
  assert.doesNotMatch(h2, /^connection:/im, 'no connection-specific header on h2');
  const h1 = await curl(['--http1.1', '-i', `http://127.0.0.1:${r.port}/hello`]);
  assert.match(h1, /^HTTP\/1\.1 200/);
  assert.match(h1, /x-proto: 1\.1/);
});

test('TLS: ALPN h2 and http/1.1 with the published certificate', async (t) => {
  const ca = makeCa('Engine Test CA');
  const leaf = ca.issue('localhost', ['DNS:localhost'], 'server');
  const certs = { certs: { 't/site': { certificate: leaf.cert, privateKey: leaf.key, fingerprint256: 'x' } }, hosts: { localhost: 't/site' } };
  const r = await startEngine({ tls: { protocols: ['h2', 'http/1.1'], certificates: certs } });
  t.after(() => r.engine.stopAccepting());
  const url = `https://localhost:${r.port}/hello`;
  const resolve = ['--resolve', `localhost:${r.port}:127.0.0.1`, '-k', '-i'];
  assert.match(await curl([...resolve, '--http2', url]), /^HTTP\/2 200[\s\S]*x-proto: h2/);
  assert.match(await curl([...resolve, '--http1.1', url]), /^HTTP\/1\.1 200[\s\S]*x-proto: 1\.1/);
  // A name no certificate serves, without a default: the handshake fails.
  await assert.rejects(curl(['--resolve', `other:${r.port}:127.0.0.1`, '-k', `https://other:${r.port}/hello`]));
  const session = h2Connect(url, { ca: ca.cert, servername: 'localhost', host: '127.0.0.1' } as never);
  t.after(() => session.close());
  const body = await new Promise<string>((resolve, reject) => {
    const s = session.request({ ':path': '/hello' });
    let b = '';
    s.on('data', (d) => (b += d));
    s.on('end', () => resolve(b));
    s.on('error', reject);
  });
  assert.equal(body, 'hi');
  // Certificates swapped: the new default serves any name.
  r.engine.updateCertificates({ ...certs, default: 't/site' });
  assert.match(await curl(['--resolve', `other:${r.port}:127.0.0.1`, '-k', '-i', `https://other:${r.port}/hello`]), /^HTTP\/2 200/);
});


