import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, apply, clusterStatus } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';
import { writeBody } from './helpers/write-body.js';

/** POSTs `size` bytes in 64 KiB writes; resolves with the answer (or the error) the client saw. */
function upload(port: number, size: number, agent: Agent): Promise<{ status?: number; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/upload', agent, headers: { 'content-length': size } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
      res.on('error', (e) => resolve({ error: `response: ${e.message}` }));
    });
    req.on('error', (e) => resolve({ error: `request: ${(e as NodeJS.ErrnoException).code ?? ''} ${e.message}` }));
    writeBody(req, size);
  });
}

test('an upstream that answers an upload before reading it: the client gets that answer, well framed, and the worker lives', BOUNDED, async (t) => {
  // Regressions: the rest of the body still arriving after the answer made the worker
  // touch a finished uWS response (it threw and the worker died, with every request on
  // it); and a streamed answer ended with a "Connection: close" line inside its chunked
  // body ("Expected LF after chunk data"). The rest of the upload is read and dropped.
  const up = createServer((req, res) => {
    if (req.method === 'GET') return void res.end('still here');
    res.writeHead(413, { 'content-type': 'text/plain' });
    res.end('too big!'); // without reading the body, as many servers do
  });
  await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
  t.after(() => {
    up.closeAllConnections();
    return new Promise((r) => up.close(r));
  });
  const gw = await startGateway(t, { workers: 1, keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'up', { targets: [`127.0.0.1:${(up.address() as AddressInfo).port}`] }],
    ['route', 'all', { cluster: 'up' }],
  ]);
  const [worker] = (await clusterStatus(gw)).workers;
  const agent = new Agent({ keepAlive: true });
  t.after(() => agent.destroy());
  for (let i = 0; i < 3; i++) {
    const r = await upload(gw.dataPort, 8 * 1024 * 1024, agent);
    assert.deepEqual(r, { status: 413, body: 'too big!' }, `upload ${i + 1}`);
  }
  // Regression: an upload paused for backpressure was never read again once the answer
  // went out, so the next request on that kept-alive connection hung until uWS's timeout.
  const next = await new Promise<string>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: gw.dataPort, path: '/ping', agent, timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve(`${res.statusCode} ${body}`));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s on the kept-alive connection')));
    req.on('error', reject);
    req.end();
  });
  assert.equal(next, '200 still here');
  const after = await request(`${gw.dataUrl}/ping`);
  assert.equal(after.status, 200);
  assert.equal(after.text, 'still here');
  const now = (await clusterStatus(gw)).workers;
  assert.deepEqual(now.map((w) => w.pid), [worker!.pid], 'the same worker serves: it never died');
});
