import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { ROOT_KEY, apply, getEntityRaw, publishRaw, setEntityRaw } from './helpers/admin.js';
import { freshSchema } from './helpers/volumes.js';
import { privatePostgresSkip, startPrivatePostgres } from './helpers/private-postgres.js';
import { gapsAround, latency, quantile, round, startLoad, startProbedUpstream } from './helpers/steady-load.js';
import { sleep, waitFor } from './helpers/wait.js';

/**
 * PostgreSQL frozen (SIGSTOP: its sockets stay open, nothing answers) for 10 s: traffic on a
 * rate-limited route (tokens leased from the supervisor) and a plain one is served as
 * before, the health probes keep their interval, admin writes answer 503 within the store's
 * bound, and once it runs again nothing acknowledged is lost and writes and publishes work.
 */

const LOOP_LAG = fileURLToPath(new URL('./helpers/loop-lag.mjs', import.meta.url));
const PAUSE_MS = 10_000;
const INTERVAL_MS = 500;
/** A statement's bound: the server's statement_timeout (3 s), then the client's own 1 s; plus 1 s for a loaded machine. */
const WRITE_BOUND_MS = 3_000 + 1_000 + 1_000;
/** What the steady client may see at worst, paused or not (quiet on this machine: p99 5-20 ms, max under 100 ms). */
const P99_BOUND_MS = 50;
const MAX_BOUND_MS = 500;

test('PostgreSQL paused 10 s: traffic as before, probes on time, writes 503 in bound; after it, nothing lost and writes and publishes work', { timeout: 90_000, skip: privatePostgresSkip() }, async (t) => {
  const pg = await startPrivatePostgres(t);
  const up = await startProbedUpstream(t, '/hc');
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY], volume: pg.volumeUrl(freshSchema()), env: { NODE_OPTIONS: `--import=${LOOP_LAG}` } });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target], healthCheck: { path: '/hc', intervalMs: INTERVAL_MS } }],
    ['route', 'limited', { cluster: 'api', pathPrefix: '/limited', steps: [{ code: 'rate-limit', settings: { requestsPerSecond: 100_000, burst: 100_000 } }] }],
    ['route', 'plain', { cluster: 'api', pathPrefix: '/plain' }],
  ]);

  // A steady client on both routes (4 connections, 10 ms apart), from before the pause to the end.
  const load = startLoad(t, gw.dataUrl, { clients: 4, paths: ['/limited/x', '/plain/x'], host: 'a.test', pauseMs: 10 });
  const writes: { name: string; at: number; ms: number; status: number; code: string }[] = [];
  const write = async (name: string) => {
    const at = Date.now();
    const r = await setEntityRaw(gw, 'route', name, { pathPrefix: `/${name}`, directResponse: { statusCode: 200, body: name } }).catch((err: Error) => ({ status: 0, json: { code: err.message } }));
    writes.push({ name, at, ms: Date.now() - at, status: r.status, code: String(r.json?.code ?? '') });
    return r.status;
  };
  await sleep(2_000);
  for (let i = 0; i < 3; i++) assert.equal(await write(`before${i}`), 200, 'writes work before the pause');

  // The pause: every process of the server by PID, SIGCONT whatever happens.
  const pids = pg.pids();
  assert.ok(pids.length >= 3, `the postmaster and its children: ${pids.join(' ')}`);
  const pausedAt = Date.now();
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  let resumedAt = 0;
  try {
    // Admin writes one after the other for the pause, each its own name.
    for (let i = 0; Date.now() - pausedAt < PAUSE_MS - WRITE_BOUND_MS; i++) {
      await write(`during${i}`);
      await sleep(250);
    }
    const left = pausedAt + PAUSE_MS - Date.now();
    if (left > 0) await sleep(left);
  } finally {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
    resumedAt = Date.now();
  }

  // After: writes work again (within the store's reconnect), then a publish that serves.
  const recovered = await waitFor('an admin write to work again', async () => (await write(`after${writes.length}`)) === 200, { timeoutMs: 15_000, intervalMs: 100 });
  const recoveredMs = Date.now() - resumedAt;
  const published = await publishRaw(gw);
  const servedName = writes.findLast((w) => w.status === 200)!.name;
  const served = await request(`${gw.dataUrl}/${servedName}`, { headers: { host: 'a.test' } });
  await sleep(1_000);
  await load.stop();

  // Every write acknowledged is there; a refused one should not be (a 503 says nothing was written).
  const stored = new Map<string, number>();
  for (const w of writes) stored.set(w.name, (await getEntityRaw(gw, 'route', w.name)).status);
  const paused = load.samples.filter((s) => s.at >= pausedAt && s.at < resumedAt);
  const failed = load.samples.filter((s) => s.status !== 200);
  const during = writes.filter((w) => w.name.startsWith('during'));
  const gaps = gapsAround(up.probes, pausedAt, resumedAt);
  const lags = gw
    .logLines()
    .filter((l): l is { loopLag: number; at: number } => typeof l === 'object' && l !== null && 'loopLag' in l)
    .filter((l) => l.at >= pausedAt && l.at <= resumedAt + 1_000);
  const p99 = round(quantile(paused.map(latency), 0.99));
  const max = round(paused.reduce((m, s) => Math.max(m, s.ms), 0));
  const before = load.samples.filter((s) => s.at < pausedAt);

  t.diagnostic(`steady client: ${load.samples.length} requests, ${failed.length} not 200${failed.length ? ` (${[...new Set(failed.map((s) => `${s.path} ${s.status || s.error}`))].slice(0, 4).join(', ')})` : ''}; p99 before ${round(quantile(before.map(latency), 0.99))} ms, during the pause p99 ${p99} ms max ${max} ms (${paused.length} requests)`);
  t.diagnostic(`writes during the pause: ${during.map((w) => `${w.status} ${w.code} ${w.ms} ms`).join('; ')}`);
  t.diagnostic(`probe gaps over the pause: min ${Math.min(...gaps)} max ${Math.max(...gaps)} ms (${gaps.join(' ')})`);
  t.diagnostic(`after SIGCONT: a write works after ${recoveredMs} ms; publish ${published.status} ${published.text.slice(0, 120)}; /${servedName} ${served.status}`);
  t.diagnostic(`supervisor loop stalls > 15 ms over the pause: ${lags.length ? `${lags.length}, longest ${Math.max(...lags.map((l) => l.loopLag))} ms, total ${lags.reduce((n, l) => n + l.loopLag, 0)} ms` : 'none'}`);
  const refusedButStored = writes.filter((w) => w.status !== 200 && stored.get(w.name) === 200).map((w) => w.name);
  t.diagnostic(`writes refused during the pause yet stored afterwards: ${refusedButStored.length ? refusedButStored.join(', ') : 'none'}`);

  // Every verdict is taken, then all the failed ones are reported together.
  const problems: string[] = [];
  const check = (ok: boolean, what: string) => void (ok || problems.push(what));
  check(paused.length >= 100, `the steady client ran through the pause: ${paused.length} requests`);
  check(failed.length === 0, `every answer of the steady client was 200: ${failed.length} were not`);
  check(p99 < P99_BOUND_MS, `steady client p99 during the pause ${p99} ms < ${P99_BOUND_MS} ms`);
  check(max < MAX_BOUND_MS, `steady client max during the pause ${max} ms < ${MAX_BOUND_MS} ms`);
  check(during.length >= 2, `writes were tried during the pause: ${during.length}`);
  const unbounded = during.filter((w) => w.ms > WRITE_BOUND_MS);
  check(unbounded.length === 0, `every write during the pause answered within ${WRITE_BOUND_MS} ms: ${unbounded.map((w) => `${w.name} ${w.ms} ms`).join(', ')}`);
  const refused = during.filter((w) => w.status !== 200);
  check(refused.length >= 1 && refused.every((w) => w.status === 503 && w.code === 'Svc.Store.Unavailable'), `writes during the pause were refused 503 Svc.Store.Unavailable: ${during.map((w) => `${w.status} ${w.code}`).join(', ')}`);
  check(gaps.length >= PAUSE_MS / INTERVAL_MS - 2, `probes kept coming during the pause: ${gaps.length} intervals`);
  const off = gaps.filter((g) => Math.abs(g - INTERVAL_MS) > INTERVAL_MS * 0.1);
  check(off.length === 0, `every probe interval over the pause within 10 % of ${INTERVAL_MS} ms: ${off.join(', ')} ms are not`);
  const lost = writes.filter((w) => w.status === 200 && stored.get(w.name) !== 200).map((w) => w.name);
  check(lost.length === 0, `every acknowledged write is stored: ${lost.join(', ')} are not`);
  check(recovered === true, 'writes work again after the pause');
  check(published.status === 200 && published.json.ok === true, `a publish after the pause: ${published.status} ${published.text.slice(0, 200)}`);
  check(served.status === 200 && served.text === servedName, `the published route serves: ${served.status} ${served.text.slice(0, 200)}`);
  assert.deepEqual(problems, []);
});
