import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { envelopeProblem, request, type HttpResult } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

const WORKERS = 2;
const TRACE = /^w(\d+)-/;

function assertNotPublished(r: HttpResult, what: string): number {
  assert.equal(r.status, 503, `${what}: status; body ${r.text}`);
  assert.equal(envelopeProblem(r), null, `${what}: envelope`);
  assert.equal(r.json.code, 'Svc.Data.NotPublished', what);
  const m = TRACE.exec(r.json.traceId);
  assert.ok(m, `${what}: traceId ${r.json.traceId} names the worker slot`);
  return Number(m[1]);
}

test('before any publish the data port answers 503 with a JSON envelope, on every method and path, from every worker', BOUNDED, async (t) => {
  const gw = await startGateway(t, { workers: WORKERS });

  const paths = ['/', '/anything', '/deep/nested/path?q=1&r=two', '/healthz', '/api/v1/sys/whoami', '/%2e%2e/admin'];
  const methods: [string, unknown][] = [
    ['GET', undefined],
    ['POST', { hello: 'world' }],
    ['PUT', 'plain text body'],
    ['DELETE', undefined],
    ['PATCH', { a: 1 }],
  ];
  const traceIds = new Set<string>();
  for (const path of paths) {
    for (const [method, body] of methods) {
      const r = await request(`${gw.dataUrl}${path}`, { method, body });
      assertNotPublished(r, `${method} ${path}`);
      traceIds.add(r.json.traceId);
    }
  }
  assert.equal(traceIds.size, paths.length * methods.length, 'every response has its own traceId');

  // Each request on a new connection: the kernel spreads them over the SO_REUSEPORT
  // workers. Keep asking (bounded) until every slot has answered.
  const seen = new Map<number, number>();
  const deadline = Date.now() + 15_000;
  let n = 0;
  const methodsCycle = ['GET', 'POST', 'PUT'];
  while (seen.size < WORKERS && Date.now() < deadline && n < 2_000) {
    const method = methodsCycle[n % methodsCycle.length]!;
    const r = await request(`${gw.dataUrl}/probe/${n}`, { method, body: method === 'GET' ? undefined : { n } });
    const slot = assertNotPublished(r, `${method} /probe/${n}`);
    seen.set(slot, (seen.get(slot) ?? 0) + 1);
    n++;
  }
  t.diagnostic(`answers per worker slot after ${n} requests: ${JSON.stringify(Object.fromEntries(seen))}`);
  assert.deepEqual(
    [...seen.keys()].sort(),
    Array.from({ length: WORKERS }, (_, i) => i),
    `every worker slot answered (after ${n} requests: ${JSON.stringify([...seen])})`,
  );
});

test('the admin /healthz answers 200 {ok:true} without a token while nothing is published', BOUNDED, async (t) => {
  const gw = await startGateway(t, { workers: 1 });
  const r = await request(`${gw.adminUrl}/healthz`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, { ok: true });
  assert.match(String(r.headers['content-type']), /^application\/json/);
});
