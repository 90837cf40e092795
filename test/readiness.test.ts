import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { request, type HttpResult } from './helpers/http.js';
import { apply, clusterStatus, publishRaw, ROOT_KEY, setEntity } from './helpers/admin.js';
import { BOUNDED, isRunning, sleep, waitFor } from './helpers/wait.js';
import { freshSchema } from './helpers/volumes.js';
import { privatePostgresSkip, startPrivatePostgres } from './helpers/private-postgres.js';
import { KeepAliveClient } from './helpers/keep-alive-client.js';
import { startHeldUpstream } from './helpers/held-upstream.js';
import type { Json } from './helpers/json.js';
import { uwsSupport } from '../src/shared/uws-support.js';

const DATA_PATH = '/readyz';
/** readiness.storeTimeoutMs's default, what a probe waits on the store at most. */
const STORE_TIMEOUT_MS = 1_000;

/** The three probes a load balancer or kubelet would make, each on a fresh connection; null: no answer (not listening yet). */
async function probes(gw: { adminUrl: string; dataUrl: string }) {
  const get = (url: string) => request(url, { timeoutMs: 3_000 }).catch(() => null);
  const [live, ready, data] = await Promise.all([get(`${gw.adminUrl}/healthz`), get(`${gw.adminUrl}/readyz`), get(`${gw.dataUrl}${DATA_PATH}`)]);
  return { live, ready, data };
}

const withDataPath = (storeTimeoutMs?: number) => (c: Record<string, Json>) => {
  c.readiness = { dataPath: DATA_PATH, ...(storeTimeoutMs === undefined ? {} : { storeTimeoutMs }) };
};

test('readiness on a SQLite node: not ready while workers boot or are replaced, ready otherwise; /healthz answers throughout', BOUNDED, async (t) => {
  // Watch the boot: the admin port is bound before the workers are forked.
  const boot: HttpResult[] = [];
  let watcher: Promise<void> = Promise.resolve();
  // Watched on after the first 200 for this long: a flip back to 503 would show in it.
  const AFTER_READY_MS = 500;
  const gw: Gateway = await startGateway(t, {
    workers: 2,
    volume: 'virtual://store.db',
    keys: [ROOT_KEY],
    edit: withDataPath(),
    onSpawn: (_p, { adminPort }) => {
      watcher = (async () => {
        // Until the first 200 (the ready line may come first: it waits for the workers, not the store), then the window.
        const deadline = performance.now() + 15_000;
        let readyAt: number | undefined;
        while (readyAt === undefined ? performance.now() < deadline : performance.now() - readyAt < AFTER_READY_MS) {
          const r = await request(`http://127.0.0.1:${adminPort}/readyz`, { timeoutMs: 2_000 }).catch(() => null);
          if (r) boot.push(r);
          if (r?.status === 200) readyAt ??= performance.now();
          await sleep(5);
        }
      })();
    },
  });
  await watcher;

  await t.test('while the workers boot, /readyz is 503 and names the workers that are not listening yet', () => {
    assert.ok(boot.length > 0, 'the admin port answered during the boot');
    const first = boot[0]!;
    assert.equal(first.status, 503, first.text);
    assert.equal(first.json.ready, false);
    assert.equal(first.json.checks.workers.ok, false);
    assert.match(first.json.checks.workers.detail, /worker \d starting/);
    // Once 200, it stays 200: no answer flips back during a clean boot (watched for AFTER_READY_MS).
    const firstReady = boot.findIndex((r) => r.status === 200);
    assert.ok(firstReady >= 0, `a 200 during the watch: ${boot.map((r) => r.status).join(' ')}`);
    const after = boot.slice(firstReady).map((r) => r.status);
    assert.ok(after.length >= 5, `${after.length} answers watched after the first 200`);
    assert.deepEqual(after, after.map(() => 200));
  });

  await t.test('a healthy node: 200 on both ports, the body says why', async () => {
    const { live, ready, data } = await waitFor('the data port to be told ready', async () => {
      const p = await probes(gw);
      return p.data?.status === 200 ? p : undefined;
    });
    assert.equal(live!.status, 200);
    assert.equal(ready!.status, 200, ready!.text);
    assert.equal(ready!.headers['cache-control'], 'no-store');
    assert.deepEqual(ready!.json, {
      ready: true,
      checks: { workers: { ok: true, ready: 2, total: 2, generation: 0 }, store: { ok: true, ms: ready!.json.checks.store.ms } },
    });
    assert.ok(ready!.json.checks.store.ms >= 0 && ready!.json.checks.store.ms < 1_000);
    assert.equal(data!.text, '{"ready":true}');
    assert.equal(data!.headers['content-type'], 'application/json');
    const head = await request(`${gw.dataUrl}${DATA_PATH}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });

  await t.test('a worker killed with SIGKILL: 503 on both ports until its replacement listens, then 200', async () => {
    const before = await clusterStatus(gw);
    const victim = before.workers.find((w) => w.slot === 1)!;
    process.kill(victim.pid!, 'SIGKILL');
    const seen = { admin: [] as string[], data: [] as string[], live: [] as number[] };
    // Probes only while the worker is replaced: cluster status asks each listening worker and
    // waits up to 500 ms for one just killed, long enough to miss the whole 503 window.
    await waitFor(
      '/readyz 503, then 200 again',
      async () => {
        const { live, ready, data } = await probes(gw);
        seen.live.push(live?.status ?? 0);
        if (ready) seen.admin.push(ready.status === 200 ? '200' : `${ready.status} ${ready.json.checks.workers.detail}`);
        if (data) seen.data.push(`${data.status} ${data.text}`);
        return seen.admin.some((a) => a.startsWith('503')) && ready?.status === 200;
      },
      { timeoutMs: 15_000, intervalMs: 10 },
    );
    const slot = (await clusterStatus(gw)).workers.find((w) => w.slot === 1)!;
    assert.ok(slot.pid !== victim.pid && slot.state === 'listening' && isRunning(slot.pid!), `slot 1 is served by a replacement: ${JSON.stringify(slot)}`);
    t.diagnostic(`admin /readyz answers: ${[...new Set(seen.admin)].join(' | ')}`);
    assert.ok(seen.admin.some((a) => /^503 worker 1 (exited, respawning|starting)$/.test(a)), `a 503 naming worker 1 among ${seen.admin.join(', ')}`);
    assert.ok(seen.data.includes('503 {"ready":false}'), `the surviving worker answered not ready on the data port: ${[...new Set(seen.data)].join(', ')}`);
    assert.deepEqual([...new Set(seen.live)], [200], '/healthz answered 200 throughout');
    await waitFor('the data port to be told ready again', async () => (await probes(gw)).data?.status === 200);
  });

  await t.test('a publish not yet acknowledged: 503 naming the worker still loading it, 200 once it acknowledged', async (st) => {
    const before = await clusterStatus(gw);
    const slow = before.workers.find((w) => w.slot === 0)!;
    const next = before.generation + 1;
    // A worker that cannot take the generation yet (busy, as with a large one): it acknowledges once resumed.
    process.kill(slow.pid!, 'SIGSTOP');
    let resumed = false;
    const resume = () => {
      if (!resumed && isRunning(slow.pid!)) process.kill(slow.pid!, 'SIGCONT');
      resumed = true;
    };
    st.after(resume);
    await setEntity(gw, 'route', 'slow', { pathPrefix: '/slow', directResponse: { statusCode: 200, body: 'slow' } });
    const publishing = publishRaw(gw);
    // Worker 1 acknowledges at once; worker 0 stays named until it is resumed.
    const waiting = await waitFor('/readyz to name only the worker that has not acknowledged', async () => {
      const r = await request(`${gw.adminUrl}/readyz`);
      return r.status === 503 && r.json.checks.workers.ready === 1 ? r : undefined;
    });
    assert.equal(waiting.json.checks.workers.detail, `worker 0 loading generation ${next}`);
    assert.deepEqual(
      (({ ok, ready, total, generation }) => ({ ok, ready, total, generation }))(waiting.json.checks.workers),
      { ok: false, ready: 1, total: 2, generation: next },
    );
    assert.equal((await request(`${gw.adminUrl}/healthz`)).status, 200);
    resume();
    const published = await publishing;
    assert.equal(published.status, 200, published.text);
    const ready = await request(`${gw.adminUrl}/readyz`);
    assert.equal(ready.status, 200, ready.text);
    assert.equal(ready.json.checks.workers.generation, next);
  });

  await t.test('the data path is answered before routing; a route that covers it is warned about and keeps the paths beside it', async () => {
    const pub = await apply(gw, [
      ['route', 'all', { directResponse: { statusCode: 200, body: 'catch-all' } }],
      ['route', 'ready-ish', { pathPrefix: '/ready', directResponse: { statusCode: 200, body: 'route' } }],
    ]);
    const ready = await waitFor('/readyz 200 on the new generation', async () => {
      const r = await request(`${gw.adminUrl}/readyz`);
      return r.status === 200 ? r : undefined;
    });
    assert.equal(ready.json.checks.workers.generation, pub.generation);
    const own = await request(`${gw.dataUrl}${DATA_PATH}`);
    assert.equal(own.text, '{"ready":true}');
    // Only the exact path: with a query it is the same path; beside it, the routes answer.
    assert.equal((await request(`${gw.dataUrl}${DATA_PATH}?probe=1`)).text, '{"ready":true}');
    assert.equal((await request(`${gw.dataUrl}/readyz/x`)).text, 'route');
    assert.equal((await request(`${gw.dataUrl}/ready`)).text, 'route');
    assert.equal((await request(`${gw.dataUrl}/other`)).text, 'catch-all');
    const warned = await waitFor('the warning', () => gw.logLines().find((l) => typeof l.msg === 'string' && l.msg.startsWith('readiness.dataPath:')));
    assert.equal(warned.route, 'default/ready-ish', 'the catch-all route is not warned about, the covering one is');
  });

  await t.test('a flood of probes: every one answers within the bound', async () => {
    const timed = async () => {
      const t0 = performance.now();
      const r = await request(`${gw.adminUrl}/readyz`, { timeoutMs: 5_000 });
      return { status: r.status, ms: performance.now() - t0 };
    };
    const all = await Promise.all(Array.from({ length: 40 }, timed));
    assert.deepEqual([...new Set(all.map((r) => r.status))], [200]);
    // The bound is readiness.storeTimeoutMs (1000 ms by default); 1 s over it for a loaded 2-core machine, as below.
    const slowest = Math.max(...all.map((r) => r.ms));
    assert.ok(slowest < STORE_TIMEOUT_MS + 1_000, `the slowest of 40 concurrent probes took ${Math.round(slowest)} ms`);
    t.diagnostic(`40 concurrent probes, the slowest answered in ${Math.round(slowest)} ms`);
  });
});

// Each of these has a gateway (and a PostgreSQL) of its own and mostly waits on a drain or
// a stopped store: they run side by side.
describe('readiness while a node stops or loses its store', { concurrency: true }, () => {
  // Regressions: the drain did not re-judge readiness, so a keep-alive probe read 200 until the
  // worker exited; on the node engine the drain cut idle kept-alive connections, so the probe read no answer.
  for (const engine of uwsSupport().ok ? (['uws', 'node'] as const) : (['node'] as const))
  test(`a node that stops: its data path reads 503 on connections still open while it drains (${engine} engine)`, BOUNDED, async (t) => {
    const held = await startHeldUpstream(t);
    const gw = await startGateway(t, { engine, workers: 1, drainGraceMs: 10_000, keys: [ROOT_KEY], edit: withDataPath() });
    await apply(gw, [['cluster', 'held', { targets: [held.target] }], ['route', 'held', { cluster: 'held', pathPrefix: '/held' }]]);
    const probe = new KeepAliveClient(gw.dataPort);
    t.after(() => probe.socket.destroy());
    await waitFor('ready on a kept-alive connection', async () => (await probe.get(DATA_PATH))?.status === 200);
    // A request in flight keeps the only worker draining (and the probe's connection open) until released.
    const inflight = request(`${gw.dataUrl}/held/x`, { timeoutMs: 15_000 });
    await waitFor('the request held upstream', () => held.held() === 1);

    const stopping = gw.stop('SIGTERM', 15_000);
    const seen: string[] = [];
    const t0 = performance.now();
    for (;;) {
      const a = await probe.get(DATA_PATH, 2_000);
      seen.push(a ? `${a.status} ${a.body}` : 'closed');
      if (!a || a.status === 503 || performance.now() - t0 > 3_000) break;
      await sleep(20);
    }
    held.release();
    assert.equal(seen.at(-1), '503 {"ready":false}', `the probes after SIGTERM: ${seen.join(', ')}`);
    assert.equal((await inflight).status, 200, 'the held request finished within the drain');
    assert.equal((await stopping).code, 0);
  });

  test('readiness on a postgres:// node: 503 while its PostgreSQL is stopped, 200 once it is back', { ...BOUNDED, skip: privatePostgresSkip() }, async (t) => {
    const pg = await startPrivatePostgres(t);
    const bound = 500;
    const gw = await startGateway(t, { workers: 1, volume: pg.volumeUrl(freshSchema()), keys: [ROOT_KEY], edit: withDataPath(bound) });
    await waitFor('ready on both ports', async () => {
      const p = await probes(gw);
      return p.ready?.status === 200 && p.data?.status === 200;
    });

    await pg.stop();
    const slowest = { ms: 0 };
    const live: number[] = [];
    const down = await waitFor(
      '/readyz 503 with the store not ready',
      async () => {
        const t0 = performance.now();
        const p = await probes(gw);
        slowest.ms = Math.max(slowest.ms, performance.now() - t0);
        live.push(p.live?.status ?? 0);
        const { ready, data } = p;
        return ready?.status === 503 && data?.status === 503 ? ready : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    assert.equal(down.json.ready, false);
    assert.equal(down.json.checks.workers.ok, true, down.text);
    assert.equal(down.json.checks.store.ok, false);
    assert.match(down.json.checks.store.detail, /^(the query failed|no answer within 500 ms)$/);
    // Stays not ready, and answers within its bound, while the store is down.
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = await request(`${gw.adminUrl}/readyz`);
      slowest.ms = Math.max(slowest.ms, performance.now() - t0);
      assert.equal(r.status, 503);
      live.push((await request(`${gw.adminUrl}/healthz`)).status);
      await sleep(100);
    }
    assert.ok(slowest.ms < bound + 1_000, `the slowest probe took ${Math.round(slowest.ms)} ms`);

    await pg.start();
    const back = await waitFor(
      '/readyz 200 again on both ports',
      async () => {
        const p = await probes(gw);
        live.push(p.live?.status ?? 0);
        return p.ready?.status === 200 && p.data?.status === 200 ? p.ready : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    assert.equal(back.json.checks.store.ok, true);
    assert.deepEqual([...new Set(live)], [200], '/healthz answered 200 throughout');
  });
});
