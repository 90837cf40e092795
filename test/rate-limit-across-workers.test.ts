import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { request, type HttpResult } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus } from './helpers/admin.js';
import { BOUNDED } from './helpers/wait.js';
import { Client } from 'undici';

const WORKERS = 2;
const limit = (burst: number) => [{ code: 'rate-limit', settings: { requestsPerSecond: 0.001, burst } }];

function tally(results: HttpResult[]): { passed: number; limited: number; other: string[] } {
  let passed = 0;
  let limited = 0;
  const other: string[] = [];
  for (const r of results) {
    if (r.status >= 200 && r.status < 300) passed++;
    else if (r.status === 429) {
      limited++;
      assert.equal(r.json?.code, 'Svc.Data.RateLimited', r.text);
      const retryAfter = Number(r.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After is a whole number of seconds: ${r.headers['retry-after']}`);
    } else other.push(`${r.status} ${r.text}`);
  }
  return { passed, limited, other };
}

test('rate-limit burst 3 with 2 workers: of 10 requests on new connections exactly 3 pass, the rest get 429 with Retry-After', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { workers: WORKERS, keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'seq', { pathPrefix: '/seq', cluster: 'api', steps: limit(3) }],
    ['route', 'par', { pathPrefix: '/par', cluster: 'api', steps: limit(3) }],
  ]);
  const st = await clusterStatus(gw);
  assert.equal(st.workers.length, WORKERS);
  assert.ok(st.workers.every((w) => w.state === 'listening' && w.generation === 1));

  // One after the other, each on its own connection; in between, a request to a path no
  // route matches tells (by its traceId) which worker new connections land on.
  const results: HttpResult[] = [];
  const slots = new Map<string, number>();
  for (let i = 0; i < 10; i++) {
    results.push(await request(`${gw.dataUrl}/seq/${i}`));
    const probe = await request(`${gw.dataUrl}/probe/${i}`);
    assert.equal(probe.status, 404);
    const slot = /^w(\d+)-/.exec(probe.json.traceId)?.[1] ?? '?';
    slots.set(slot, (slots.get(slot) ?? 0) + 1);
  }
  const seq = tally(results);
  t.diagnostic(`sequential: ${JSON.stringify(seq)}; new connections per worker slot: ${JSON.stringify(Object.fromEntries(slots))}`);
  assert.deepEqual(seq.other, []);
  assert.equal(seq.passed, 3, 'exactly burst requests pass, across both workers');
  assert.equal(seq.limited, 7);
  // (10 probes miss a worker with probability 2/1024: keep probing, bounded, before judging.)
  for (let i = 0; i < 200 && slots.size < WORKERS; i++) {
    const probe = await request(`${gw.dataUrl}/probe/extra`);
    slots.set(/^w(\d+)-/.exec(probe.json.traceId)?.[1] ?? '?', 1);
  }
  assert.deepEqual([...slots.keys()].sort(), ['0', '1'], 'new connections are spread over both workers');
  assert.deepEqual(results.slice(0, 3).map((r) => r.status), [200, 200, 200], 'the first 3 pass');
  assert.equal(up.requests.filter((r) => r.url.startsWith('/seq/')).length, 3, 'only the passing requests reached the upstream');

  // All at once (each its own connection): still exactly 3.
  const par = tally(await Promise.all(Array.from({ length: 10 }, (_, i) => request(`${gw.dataUrl}/par/${i}`))));
  t.diagnostic(`concurrent: ${JSON.stringify(par)}`);
  assert.deepEqual(par.other, []);
  assert.equal(par.passed, 3, 'exactly burst concurrent requests pass');
  assert.equal(par.limited, 7);

  // The buckets are per route: a further burst on /seq stays limited.
  const again = tally(await Promise.all(Array.from({ length: 4 }, () => request(`${gw.dataUrl}/seq/again`))));
  assert.equal(again.passed, 0, 'a spent bucket stays spent (0.001 tokens per second)');
});

test('rate-limit burst 3, requests alternating between a connection on each worker: exactly 3 pass', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { workers: WORKERS, keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'lim', { pathPrefix: '/lim', cluster: 'api', steps: limit(3) }],
  ]);

  // Open keep-alive connections until one is held by each worker (a 404 on the same
  // connection names its worker in the traceId).
  const bySlot = new Map<string, Client>();
  const opened: Client[] = [];
  t.after(() => Promise.all(opened.map((c) => c.destroy())));
  for (let i = 0; i < 200 && bySlot.size < WORKERS; i++) {
    const c = new Client(gw.dataUrl, { pipelining: 1 });
    opened.push(c);
    const r = await c.request({ path: '/probe', method: 'GET' });
    const body = (await r.body.json()) as { traceId: string };
    const slot = /^w(\d+)-/.exec(body.traceId)?.[1] ?? '?';
    if (!bySlot.has(slot)) bySlot.set(slot, c);
  }
  assert.deepEqual([...bySlot.keys()].sort(), ['0', '1'], 'a connection on each worker');

  const statuses: string[] = [];
  for (let i = 0; i < 10; i++) {
    const slot = String(i % 2);
    const c = bySlot.get(slot)!;
    const r = await c.request({ path: `/lim/${i}`, method: 'GET' });
    await r.body.text();
    statuses.push(`w${slot}:${r.statusCode}`);
    if (r.statusCode === 429) assert.ok(Number(r.headers['retry-after']) >= 1, 'Retry-After');
  }
  t.diagnostic(statuses.join(' '));
  assert.equal(statuses.filter((s) => s.endsWith(':200')).length, 3, `exactly 3 pass over both workers: ${statuses.join(' ')}`);
  assert.equal(statuses.filter((s) => s.endsWith(':429')).length, 7, statuses.join(' '));
  assert.deepEqual(statuses.slice(0, 3), ['w0:200', 'w1:200', 'w0:200'], 'the first three (on both workers) pass');
});
