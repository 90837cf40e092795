import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { freshSchema } from './helpers/volumes.js';
import { pgRun } from './helpers/fleet.js';
import { startDelayProxy } from './helpers/delay-proxy.js';
import { gapsAround, quantile, round, startLoad, startProbedUpstream, windowP99s, type Sample } from './helpers/steady-load.js';
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
  await apply(gw, [['cluster', 'api', api], ['route', 'api', rateLimited]], TENANT);
  // The state the tenant syncs: what serves, plus 100 clusters and 400 routes.
  const state = { version: 1, clusters: { api } as Record<string, unknown>, routes: { api: rateLimited } as Record<string, unknown> };
  for (let i = 0; i < 100; i++) state.clusters[`c${i}`] = { targets: [up.target] };
  for (let i = 0; i < ENTITIES - 100; i++) state.routes[`r${i}`] = { cluster: `c${i % 100}`, pathPrefix: `/r${i}`, hosts: [HOST] };

  const load = startLoad(t, gw.dataUrl, { clients: CLIENTS, paths: ['/api/x'], host: HOST });
  await sleep(1_000); // warm: connections open, leases flowing
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

  // A again, after: the comparison is against both quiet phases, so drift over the run cancels out.
  const a2 = { from: Date.now(), to: 0 };
  await sleep(PHASE_MS);
  a2.to = Date.now();
  await load.stop();

  const samples = load.samples;
  const inPhase = (p: { from: number; to: number }) => samples.filter((s) => s.at >= p.from && s.at < p.to);
  const p99 = (xs: Sample[]) => round(quantile(xs.map((s) => s.ms), 0.99));
  const quietWindows = [...windowP99s(samples, a1.from, a1.to, WINDOW_MS), ...windowP99s(samples, a2.from, a2.to, WINDOW_MS)];
  const busyWindows = windowP99s(samples, b.from, b.to, WINDOW_MS);
  const A = round(quantile(quietWindows, 0.5));
  const B = round(quantile(busyWindows, 0.5));
  const gaps = gapsAround(up.probes, b.from, published);
  const lags = gw
    .logLines()
    .filter((l): l is { loopLag: number; at: number } => typeof l === 'object' && l !== null && 'loopLag' in l)
    .filter((l) => l.at >= b.from && l.at <= published + 1_000);
  const failed = samples.filter((s) => s.status !== 200);

  t.diagnostic(`requests: ${samples.length} (${round(samples.length / ((a2.to - a1.from) / 1000), 0)}/s), failed: ${failed.length}${failed.length ? ` e.g. ${failed.slice(0, 3).map((s) => s.status || s.error).join(', ')}` : ''}`);
  t.diagnostic(`p99 whole phases: A1 ${p99(inPhase(a1))} ms, B ${p99(inPhase(b))} ms, A2 ${p99(inPhase(a2))} ms; max in B ${round(Math.max(...inPhase(b).map((s) => s.ms)))} ms`);
  t.diagnostic(`p99 per ${WINDOW_MS} ms window: quiet median A ${A} ms (${quietWindows.map((x) => round(x, 1)).join(' ')}), busy median B ${B} ms (${busyWindows.map((x) => round(x, 1)).join(' ')}), B - A ${round(B - A)} ms`);
  t.diagnostic(`sync+publish of ${ENTITIES} entities: ${synced.status} in ${publishMs} ms; probe gaps around it: min ${Math.min(...gaps)} max ${Math.max(...gaps)} ms (${gaps.join(' ')})`);
  t.diagnostic(`supervisor loop stalls > 15 ms during the publish: ${lags.length ? `${lags.length}, longest ${Math.max(...lags.map((l) => l.loopLag))} ms, total ${lags.reduce((n, l) => n + l.loopLag, 0)} ms` : 'none'}`);

  assert.equal(synced.status, 200, synced.text);
  assert.equal(synced.json.publish?.ok, true, synced.text);
  assert.equal(synced.json.counts?.create, ENTITIES, synced.text);
  assert.equal(failed.length, 0, `every request answered 200: ${failed.length} did not`);
  assert.ok(quietWindows.length >= 10 && busyWindows.length >= 5, `enough windows: ${quietWindows.length} quiet, ${busyWindows.length} busy`);
  assert.ok(B - A < 2, `p99 during the publish (median of windows) ${B} ms is within 2 ms of the quiet p99 ${A} ms`);
  assert.ok(gaps.length >= 2, `probes arrived around the publish: ${gaps.join(' ')}`);
  for (const g of gaps) assert.ok(Math.abs(g - INTERVAL_MS) <= INTERVAL_MS * 0.1, `probe interval ${g} ms within 10 % of ${INTERVAL_MS} ms (all: ${gaps.join(' ')})`);
  // The new routes serve.
  const served = await request(`${gw.dataUrl}/r7/x`, { headers: { host: HOST } });
  assert.equal(served.status, 200, served.text);
});
