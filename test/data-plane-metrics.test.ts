import { test } from 'node:test';
import assert from 'node:assert/strict';
import parsePrometheus from 'parse-prometheus-text-format';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { request, type HttpResult } from './helpers/http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { freePort } from './helpers/ports.js';
import { BOUNDED, sleep } from './helpers/wait.js';

interface Family {
  name: string;
  type: string;
  metrics: { labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string; sum?: string }[];
}

type Scrape = Map<string, Family> & { text: string };

async function scrape(gw: Gateway): Promise<Scrape> {
  const r = await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root });
  assert.equal(r.status, 200, r.text);
  assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return Object.assign(new Map((parsePrometheus(r.text) as Family[]).map((f) => [f.name, f])), { text: r.text });
}

/**
 * A labelled histogram's series: parse-prometheus-text-format folds every series of a
 * histogram family into one, so each series' samples are read by name and labels here.
 */
function histogram(s: Scrape, name: string, labels: Record<string, string>): { count: number; buckets: Record<string, number> } {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const has = (line: string) => want.every((l) => line.includes(l));
  const lines = s.text.split('\n').filter((l) => l.startsWith(`${name}_`) && has(l));
  const count = Number(lines.find((l) => l.startsWith(`${name}_count`))?.split(' ').at(-1));
  const buckets: Record<string, number> = {};
  for (const l of lines.filter((x) => x.startsWith(`${name}_bucket`))) buckets[/le="([^"]+)"/.exec(l)![1]!] = Number(l.split(' ').at(-1));
  return { count, buckets };
}

/** The value of the one sample of `name` whose labels include `labels` (0 when none). */
function value(fams: Scrape, name: string, labels: Record<string, string>): number {
  const hits = (fams.get(name)?.metrics ?? []).filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  assert.ok(hits.length <= 1, `${name} ${JSON.stringify(labels)} matches one series at most`);
  return hits.length ? Number(hits[0]!.value ?? hits[0]!.count) : 0;
}

const slotOf = (r: HttpResult) => /^w(\d+)-/.exec(String(r.headers['x-request-id']))?.[1];

test('after a known mix over 2 workers, /metrics shows exactly those counts by route and status class within 2 s, and histograms count every request', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const dead = await freePort();
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['cluster', 'gone', { targets: [`127.0.0.1:${dead}`] }],
    ['route', 'a', { pathPrefix: '/a', cluster: 'api' }],
    ['route', 'b', { pathPrefix: '/b', cluster: 'api', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 0.001, burst: 5 } }] }],
    ['route', 'c', { pathPrefix: '/c', cluster: 'gone' }],
  ]);
  const sent: HttpResult[] = [];
  const go = async (n: number, path: string, headers: Record<string, string> = {}) => {
    for (let i = 0; i < n; i++) sent.push(await request(`${gw.dataUrl}${path}`, { headers }));
  };
  await go(30, '/a/ok');
  await go(10, '/a/missing', { 'x-up-status': '404' });
  await go(5, '/a/broken', { 'x-up-status': '502' });
  await go(12, '/b/x'); // burst 5: 5 pass, 7 refused 429
  await go(4, '/c/x'); // connection refused: 502
  await go(3, '/nowhere'); // no route: 404
  await go(2, '/a/ok', { 'x-up-delay-ms': '30' });
  const statuses = (prefix: string) => sent.filter((r) => r.json?.url?.startsWith?.(prefix) || false).length;
  assert.equal(statuses('/a/ok'), 32, 'the upstream answered every /a/ok');
  assert.deepEqual(new Set(sent.map(slotOf)), new Set(['0', '1']), 'requests landed on both workers');
  const last = Date.now();

  const want: [Record<string, string>, number][] = [
    [{ route: 'a', status_class: '2xx' }, 32],
    [{ route: 'a', status_class: '4xx' }, 10],
    [{ route: 'a', status_class: '5xx' }, 5],
    [{ route: 'b', status_class: '2xx' }, 5],
    [{ route: 'b', status_class: '4xx' }, 7],
    [{ route: 'c', status_class: '5xx' }, 4],
  ];
  let fams = await scrape(gw);
  while (Date.now() - last < 2_000 && value(fams, 'switchyard_requests_total', { tenant: 'default', route: 'b', method: 'GET', status_class: '4xx' }) < 7) {
    await sleep(100);
    fams = await scrape(gw);
  }
  await sleep(Math.max(0, 2_000 - (Date.now() - last)));
  fams = await scrape(gw);
  for (const [labels, n] of want) assert.equal(value(fams, 'switchyard_requests_total', { tenant: 'default', method: 'GET', ...labels }), n, JSON.stringify(labels));
  assert.equal(value(fams, 'switchyard_requests_total', { tenant: '', route: '', status_class: '4xx' }), 3, 'requests no route took count under empty names');
  const total = (fams.get('switchyard_requests_total')?.metrics ?? []).reduce((s, m) => s + Number(m.value), 0);
  assert.equal(total, sent.length, 'every request counted once, none twice');

  assert.equal(fams.get('switchyard_request_duration_seconds')?.type, 'HISTOGRAM');
  const count = (route: string) => histogram(fams, 'switchyard_request_duration_seconds', { route }).count;
  assert.deepEqual([count('a'), count('b'), count('c'), count('')], [47, 12, 4, 3], 'each route histogram counts its requests');
  const a = histogram(fams, 'switchyard_request_duration_seconds', { route: 'a' });
  assert.ok(a.buckets['0.025']! <= 45 && a.buckets['+Inf'] === 47, `the two delayed requests fall above 25 ms: ${JSON.stringify(a.buckets)}`);

  assert.equal(value(fams, 'switchyard_step_rejections_total', { route: 'b', step: 'rate-limit', status: '429' }), 7);
  assert.equal(histogram(fams, 'switchyard_upstream_duration_seconds', { tenant: 'default', cluster: 'api' }).count, 52, 'one time to first byte per answered attempt');
  assert.equal(value(fams, 'switchyard_upstream_errors_total', { tenant: 'default', cluster: 'api', kind: 'status' }), 5, 'the 502 answers');
  assert.ok(value(fams, 'switchyard_upstream_errors_total', { tenant: 'default', cluster: 'gone', target: `127.0.0.1:${dead}`, kind: 'connect' }) >= 4, 'refused connections');
  assert.ok(value(fams, 'switchyard_bytes_sent_total', { route: 'a' }) > 0);
  const conns = fams.get('switchyard_connections')!.metrics.map((m) => m.labels?.worker).sort();
  assert.deepEqual(conns, ['0', '1'], 'one connections gauge per worker');
  assert.equal(value(fams, 'switchyard_inflight_requests', { generation: '1' }), 0, 'nothing in flight once every answer came');
});

test('request ids: every answer carries one, the upstream gets the same, envelopes carry it as traceId; an incoming id is replaced unless trusted', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'a', { pathPrefix: '/a', cluster: 'api' }],
    ['route', 'fixed', { pathPrefix: '/fixed', directResponse: { statusCode: 200, body: 'hi' } }],
    ['route', 'kept', { pathPrefix: '/kept', cluster: 'api', steps: [{ code: 'request-id', settings: { keepIncoming: true } }] }],
  ]);
  const ok = await request(`${gw.dataUrl}/a/1`, { headers: { 'x-request-id': 'client-chosen' } });
  const id = String(ok.headers['x-request-id']);
  assert.match(id, /^w0-[0-9a-f]{8}-[0-9a-z]+$/);
  assert.equal(ok.json.headers['x-request-id'], id, 'the upstream got the same id, not the client\'s');

  const miss = await request(`${gw.dataUrl}/nowhere`);
  assert.equal(miss.status, 404);
  assert.equal(miss.json.traceId, miss.headers['x-request-id'], 'the envelope names the id the client got');
  const fixed = await request(`${gw.dataUrl}/fixed`);
  assert.match(String(fixed.headers['x-request-id']), /^w0-/);
  const upFailed = await request(`${gw.dataUrl}/a/x`, { headers: { 'x-up-status': '503', 'x-up-headers': JSON.stringify({ 'x-request-id': 'upstream-own' }) } });
  assert.equal(upFailed.status, 503);
  assert.match(String(upFailed.headers['x-request-id']), /^w0-/, 'the upstream\'s own copy is replaced by the request\'s id');

  const kept = await request(`${gw.dataUrl}/kept/1`, { headers: { 'x-request-id': 'lb-1234' } });
  assert.equal(kept.headers['x-request-id'], 'lb-1234', 'a route with request-id keepIncoming trusts it');
  assert.equal(kept.json.headers['x-request-id'], 'lb-1234');
  const forged = await request(`${gw.dataUrl}/kept/2`, { headers: { 'x-request-id': 'bad id\twith tab' } });
  assert.match(String(forged.headers['x-request-id']), /^w0-/, 'an ill-formed incoming id is never kept');

  const trusting = await startGateway(t, { keys: [ROOT_KEY], edit: (c) => void (c.requestId = { trustIncoming: 'always', header: 'X-Correlation-Id' }) });
  await apply(trusting, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'a', { pathPrefix: '/a', cluster: 'api' }],
  ]);
  const t1 = await request(`${trusting.dataUrl}/a/1`, { headers: { 'x-correlation-id': 'abc-1' } });
  assert.equal(t1.headers['x-correlation-id'], 'abc-1');
  assert.equal(t1.json.headers['x-correlation-id'], 'abc-1');
  assert.equal(t1.headers['x-request-id'], undefined, 'only the configured header');
});

test('metrics and request ids off: no data-plane series, no id header', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    edit: (c) => {
      c.metrics = { enabled: false };
      c.requestId = { enabled: false };
    },
  });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target] }],
    ['route', 'a', { pathPrefix: '/a', cluster: 'api' }],
  ]);
  const r = await request(`${gw.dataUrl}/a/1`, { headers: { 'x-request-id': 'client-1' } });
  assert.equal(r.headers['x-request-id'], undefined);
  assert.equal(r.json.headers['x-request-id'], 'client-1', 'an incoming header passes as any other');
  await sleep(1_300);
  const fams = await scrape(gw);
  assert.equal(fams.get('switchyard_requests_total')?.metrics.length ?? 0, 0);
  assert.ok(fams.has('switchyard_generation'));
});
