import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { freshSchema } from './helpers/volumes.js';
import { pgRun } from './helpers/fleet.js';
import { startDelayProxy } from './helpers/delay-proxy.js';
import { gapsAround, latency, pairedWindowP99s, quantile, round, startLoad, startProbedUpstream, type Sample } from './helpers/steady-load.js';
import { sleep } from './helpers/wait.js';

/**
 * The supervisor on a PostgreSQL 5 ms away (each way): a tenant's 500-entity sync and publish
 * must not be felt by traffic on a rate-limited route (whose tokens the workers lease from the
 * supervisor) nor by the supervisor's health probes.
 */

const LOOP_LAG = fileURLToPath(new URL('./helpers/loop-lag.mjs', import.meta.url));
const DELAY_MS = 5;
const CLIENTS = 16;
const PHASE_MS = 6_000;
const WINDOW_MS = 500;
/** The first seconds of a load are slow (JIT, pools): measured 20-65 ms p99 windows for about 2 s. */
const WARM_MS = 3_000;
const INTERVAL_MS = 500;
const ENTITIES = 500;
const HOST = 'acme.example';
const TENANT = 'acme';

test('PostgreSQL 5 ms away: a 500-entity sync and publish leaves the data plane p99 (+<2 ms), the health probes (±10 %) and every request alone', { timeout: 120_000 }, async (t) => {
  const pgHost = process.env.PGHOST ?? '127.0.0.1';
  const pgPort = Number(process.env.PGPORT ?? 5432);
  const proxy = await startDelayProxy(t, pgHost, pgPort, DELAY_MS);
  const schema = freshSchema();
  t.after(() => pgRun(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  const up = await startProbedUpstream(t, '/hc');
  const gw = await startGateway(t, {
    workers: 2,
    keys: [ROOT_KEY],
    volume: `postgres://${process.env.PGUSER ?? 'postgres'}@127.0.0.1:${proxy.port}/${process.env.PGDATABASE ?? 'test'}?schema=${schema}`,
    readyTimeoutMs: 60_000,
    env: { NODE_OPTIONS: `--import=${LOOP_LAG}` },
    edit: (c) => {
      // A tenant other than `default` may reach loopback only when the operator allows it.
      c.upstreams = { allow: ['127.0.0.1/32'] };
    },
  });
  assert.ok((await proxy.connections()) >= 1, 'the gateway reaches PostgreSQL through the delaying proxy');

  const api = { targets: [up.target], healthCheck: { path: '/hc', intervalMs: INTERVAL_MS } };
  const rateLimited = { cluster: 'api', pathPrefix: '/api', hosts: [HOST], steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 100_000, burst: 100_000 } }] };
  const plain = { cluster: 'api', pathPrefix: '/plain', hosts: [HOST] };
  await apply(gw, [['cluster', 'api', api], ['route', 'api', rateLimited], ['route', 'plain', plain]], TENANT);
  // The state the tenant syncs: what serves, plus 100 clusters and 400 routes.
  const state = { version: 1, clusters: { api } as Record<string, unknown>, routes: { api: rateLimited, plain } as Record<string, unknown> };
  for (let i = 0; i < 100; i++) state.clusters[`c${i}`] = { targets: [up.target] };
  for (let i = 0; i < ENTITIES - 100; i++) state.routes[`r${i}`] = { cluster: `c${i % 100}`, pathPrefix: `/r${i}`, hosts: [HOST] };

  // Each client alternates the rate-limited route and a plain one to the same cluster: the
  // plain route is the control, run at the same instants through the same worker.
  const load = startLoad(t, gw.dataUrl, { clients: CLIENTS, paths: ['/api/x', '/plain/x'], host: HOST });
  await sleep(WARM_MS);
  const a1 = { from: Date.now(), to: 0 };
  await sleep(PHASE_MS);
  a1.to = Date.now();

  // B: the same load while the tenant writes 500 entities and publishes them (one sync).
  const b = { from: Date.now(), to: 0 };
  const synced = await request(`${gw.adminUrl}/api/v1/${TENANT}/sync`, { method: 'POST', token: gw.tokens.root, body: { state, publish: true }, timeoutMs: 90_000 });
  const published = Date.now();
  const publishMs = published - b.from;
  const left = b.from + PHASE_MS - Date.now();
  if (left > 0) await sleep(left);
  b.to = Date.now();

  // A again, after: the quiet windows are taken on both sides of the publish, so drift cancels out.
  const a2 = { from: Date.now(), to: 0 };
  await sleep(PHASE_MS);
  a2.to = Date.now();
  await load.stop();

  const samples = load.samples;
  const limited = (s: Sample) => s.path === '/api/x';
  const inPhase = (p: { from: number; to: number }) => samples.filter((s) => s.at >= p.from && s.at < p.to && limited(s));
  const p99 = (xs: Sample[]) => round(quantile(xs.map(latency), 0.99));
  const windows = (p: { from: number; to: number }) => pairedWindowP99s(samples, p.from, p.to, WINDOW_MS, limited);
  const quiet = [...windows(a1), ...windows(a2)];
  const busy = windows(b);
  // A and B: the rate-limited route's p99, as the median over the phase's windows, raw and as
  // its excess over the plain route's p99 in the same window (what the lease adds).
  const median = (xs: number[]) => round(quantile(xs, 0.5));
  const A = median(quiet.map(([l]) => l));
  const B = median(busy.map(([l]) => l));
  const Ax = median(quiet.map(([l, p]) => l - p));
  const Bx = median(busy.map(([l, p]) => l - p));
  // The publish itself (and half a second after, for requests it held), not diluted by the rest of
  // phase B: the rate-limited route's p99 over the plain route's, against that excess over both quiet phases.
  const excessOf = (xs: Sample[]) => quantile(xs.filter(limited).map(latency), 0.99) - quantile(xs.filter((s) => !limited(s)).map(latency), 0.99);
  const Dx = round(excessOf(samples.filter((s) => s.at >= b.from && s.at < published + 500)));
  const Qx = round(excessOf(samples.filter((s) => (s.at >= a1.from && s.at < a1.to) || (s.at >= a2.from && s.at < a2.to))));
  const gaps = gapsAround(up.probes, b.from, published);
  const lags = gw
    .logLines()
    .filter((l): l is { loopLag: number; at: number } => typeof l === 'object' && l !== null && 'loopLag' in l)
    .filter((l) => l.at >= b.from && l.at <= published + 1_000);
  // The same stalls in the quiet phases: what the machine alone does to the supervisor's loop.
  const quietLags = gw
    .logLines()
    .filter((l): l is { loopLag: number; at: number } => typeof l === 'object' && l !== null && 'loopLag' in l)
    .filter((l) => (l.at >= a1.from && l.at < a1.to) || (l.at >= a2.from && l.at < a2.to));
  const longest = (xs: { loopLag: number }[]) => xs.reduce((m, l) => Math.max(m, l.loopLag), 0);
  const failed = samples.filter((s) => s.status !== 200);
  const fmt = (xs: number[]) => xs.map((x) => round(x, 1)).join(' ');

  t.diagnostic(`requests: ${samples.length} (${round(samples.length / ((a2.to - a1.from) / 1000), 0)}/s), failed: ${failed.length}${failed.length ? ` (${[...new Set(failed.map((s) => `${s.path} ${s.status || s.error}`))].slice(0, 4).join(', ')})` : ''}`);
  t.diagnostic(`rate-limited route p99 whole phases: A1 ${p99(inPhase(a1))} ms, B ${p99(inPhase(b))} ms, A2 ${p99(inPhase(a2))} ms; max in B ${round(inPhase(b).reduce((m, s) => Math.max(m, s.ms), 0))} ms`);
  t.diagnostic(`p99 per ${WINDOW_MS} ms window, median: quiet A ${A} ms, during the publish B ${B} ms, B - A ${round(B - A)} ms`);
  t.diagnostic(`  quiet windows, rate-limited: ${fmt(quiet.map(([l]) => l))}; plain: ${fmt(quiet.map(([, p]) => p))}`);
  t.diagnostic(`  busy windows, rate-limited: ${fmt(busy.map(([l]) => l))}; plain: ${fmt(busy.map(([, p]) => p))}`);
  t.diagnostic(`excess of the rate-limited route over the plain one, median of windows: quiet ${Ax} ms, busy ${Bx} ms, difference ${round(Bx - Ax)} ms`);
  t.diagnostic(`excess over the publish itself (${publishMs + 500} ms): ${Dx} ms; over the quiet phases: ${Qx} ms`);
  t.diagnostic(`sync+publish of ${ENTITIES} entities: ${synced.status} in ${publishMs} ms; probe gaps around it: min ${Math.min(...gaps)} max ${Math.max(...gaps)} ms (${gaps.join(' ')})`);
  t.diagnostic(`supervisor loop stalls > 15 ms during the publish: ${lags.length ? `${lags.length}, longest ${Math.max(...lags.map((l) => l.loopLag))} ms, total ${lags.reduce((n, l) => n + l.loopLag, 0)} ms` : 'none'}`);

  // Every verdict is taken, then all the failed ones are reported together.
  const problems: string[] = [];
  const check = (ok: boolean, what: string) => void (ok || problems.push(what));
  check(synced.status === 200 && synced.json.publish?.ok === true, `the sync with publish answered 200 ok: ${synced.status} ${synced.text.slice(0, 300)}`);
  check(synced.json.counts?.create === ENTITIES, `the sync created ${ENTITIES} entities: ${JSON.stringify(synced.json.counts)}`);
  check(failed.length === 0, `every request answered 200: ${failed.length} did not`);
  check(quiet.length >= 10 && busy.length >= 5, `enough windows: ${quiet.length} quiet, ${busy.length} busy`);
  // The machine's own noise moves both routes alike (measured with no publish at all: the raw
  // medians of two quiet phases 1.4-1.9 ms apart, their excess 0.04-0.08 ms): the bound holds the excess.
  check(Bx - Ax < 2, `the rate-limited route's p99 excess over the plain route during the publish (${Bx} ms) is within 2 ms of the quiet one (${Ax} ms)`);
  // Leases absorb a supervisor stall shorter than their renewal margin (250 ms), so the loop itself
  // is held too: no stall during the publish past 100 ms (the compile, on the loop, takes 15-25 ms
  // here when the machine is quiet and up to ~70 ms when it is loaded), or twice the quiet phases' longest.
  const stallBound = Math.max(100, 2 * longest(quietLags));
  check(longest(lags) < stallBound, `the supervisor's longest loop stall during the publish (${longest(lags)} ms) is under ${stallBound} ms (quiet phases: ${longest(quietLags)} ms)`);
  check(Dx - Qx < 2, `the rate-limited route's p99 excess over the plain route during the publish itself (${Dx} ms) is within 2 ms of the quiet phases' (${Qx} ms)`);
  check(gaps.length >= 2, `probes arrived around the publish: ${gaps.join(' ')}`);
  const off = gaps.filter((g) => Math.abs(g - INTERVAL_MS) > INTERVAL_MS * 0.1);
  check(off.length === 0, `every probe interval around the publish within 10 % of ${INTERVAL_MS} ms: ${off.join(', ')} ms are not`);
  const served = await request(`${gw.dataUrl}/r7/x`, { headers: { host: HOST } });
  check(served.status === 200, `a route of the sync serves: ${served.status} ${served.text.slice(0, 200)}`);
  assert.deepEqual(problems, []);
});
