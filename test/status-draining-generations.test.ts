/**
 * `switchyard status` (GET /api/v1/sys/cluster/status) shows, per worker, its open
 * data-port connections and every generation it still serves with the requests in flight
 * on it: after a publish, the replaced generation stays listed on the workers that hold
 * its requests, and leaves once they end. The counts are asked of the workers per call;
 * a worker that cannot answer is shown without them and does not hold the call up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { request, type HttpResult } from './helpers/http.js';
import { ROOT_KEY, apply, clusterStatus, publish, setEntity, waitForWorkersAt, type WorkerStatus } from './helpers/admin.js';
import { startHeldUpstream } from './helpers/held-upstream.js';
import { runCli } from './helpers/cli.js';
import { BOUNDED, waitFor } from './helpers/wait.js';

type Served = { generation: number; inFlight: number };
type LoadedWorker = WorkerStatus & { connections?: number; generations?: Served[] };

/** Requests held on generation N: at least MIN_HELD, more until both workers hold one (at most MAX_HELD). */
const MIN_HELD = 4;
const MAX_HELD = 24;

async function workers(gw: Gateway): Promise<LoadedWorker[]> {
  return (await clusterStatus(gw)).workers as LoadedWorker[];
}

/** In flight on `generation` in this worker (0 when it no longer lists it). */
const inFlightOn = (w: LoadedWorker, generation: number) => w.generations?.find((g) => g.generation === generation)?.inFlight ?? 0;

test('a replaced generation is listed with its requests in flight on the workers holding them, and leaves once they end', BOUNDED, async (t) => {
  const up = await startHeldUpstream(t);
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY, { id: 'config-reader', scopes: ['config:read', 'metrics:read'] }] });
  const first = await apply(gw, [
    ['cluster', 'slow', { targets: [up.target], timeouts: { headersMs: 60_000 } }],
    ['route', 'slow', { cluster: 'slow', pathPrefix: '/slow' }],
  ]);
  const n = first.generation;
  await waitForWorkersAt(gw, n);

  const idle = await workers(gw);
  for (const w of idle) {
    assert.equal(w.connections, 0, `worker ${w.slot}: ${JSON.stringify(w)}`);
    assert.deepEqual(w.generations, [{ generation: n, inFlight: 0 }], `worker ${w.slot}`);
  }

  // One held request at a time (each on its own connection), until both workers hold some:
  // the kernel spreads connections, so the status itself says which worker took each.
  const answers: Promise<HttpResult>[] = [];
  let holding: LoadedWorker[] = idle;
  while (answers.length < MIN_HELD || holding.some((w) => inFlightOn(w, n) === 0)) {
    assert.ok(answers.length < MAX_HELD, `${MAX_HELD} requests all reached one worker: ${JSON.stringify(holding)}`);
    answers.push(request(`${gw.dataUrl}/slow/${answers.length}`, { timeoutMs: 60_000 }));
    await waitFor(`the upstream holding ${answers.length} requests`, () => up.held() === answers.length);
    holding = await workers(gw);
  }
  const held = answers.length;
  t.diagnostic(`held ${held} requests: ${holding.map((w) => `worker ${w.slot} ${inFlightOn(w, n)}`).join(', ')}`);
  assert.equal(holding.reduce((sum, w) => sum + inFlightOn(w, n), 0), held);
  assert.equal(holding.reduce((sum, w) => sum + w.connections!, 0), held, 'one open connection per held request');

  // A publish while they are in flight: N+1 is current, N still served where requests hold it.
  await setEntity(gw, 'route', 'ping', { pathPrefix: '/ping', directResponse: { statusCode: 200, body: 'pong' } });
  const next = (await publish(gw)).generation;
  assert.equal(next, n + 1);
  const during = await clusterStatus(gw);
  assert.equal(during.generation, next);
  for (const w of during.workers as LoadedWorker[]) {
    assert.equal(w.generation, next, `worker ${w.slot} acknowledged ${next}`);
    const mine = inFlightOn(holding.find((h) => h.slot === w.slot)!, n);
    assert.deepEqual(w.generations, [{ generation: next, inFlight: 0 }, { generation: n, inFlight: mine }], `worker ${w.slot}`);
  }
  // A request started now runs on N+1 and is counted there.
  const onNext = request(`${gw.dataUrl}/slow/next`, { timeoutMs: 60_000 });
  await waitFor('the upstream holding the request on N+1', () => up.held() === held + 1);
  const withNext = await workers(gw);
  assert.equal(withNext.reduce((sum, w) => sum + inFlightOn(w, next), 0), 1);
  assert.equal(withNext.reduce((sum, w) => sum + inFlightOn(w, n), 0), held);

  // The CLI prints the same JSON body, fields included.
  const cli = await runCli(['status', '--admin', gw.adminUrl, '--token', gw.tokens.root!]);
  assert.equal(cli.code, 0, cli.stdout + cli.stderr);
  for (const w of cli.json.workers as LoadedWorker[]) {
    assert.equal(typeof w.connections, 'number');
    assert.equal(w.generations![0]!.generation, next);
    assert.equal(inFlightOn(w, n), inFlightOn(holding.find((h) => h.slot === w.slot)!, n));
  }

  up.release();
  for (const r of await Promise.all([...answers, onNext])) assert.equal(r.status, 200, r.text);
  const drained = await waitFor(
    'N gone from every worker and every connection closed',
    async () => {
      const ws = await workers(gw);
      return ws.every((w) => w.connections === 0 && w.generations?.length === 1) ? ws : undefined;
    },
    { timeoutMs: 10_000 },
  );
  for (const w of drained) assert.deepEqual(w.generations, [{ generation: next, inFlight: 0 }], `worker ${w.slot}`);

  await t.test('a key without cluster:read is refused 403', async () => {
    const r = await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token: gw.tokens['config-reader'] });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json.code, 'Svc.Auth.Scope');
    assert.match(r.json.message, /cluster:read/);
  });
});

test('a worker that cannot answer is shown without connections and generations; the call still answers', BOUNDED, async (t) => {
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY] });
  const before = await workers(gw);
  // Nothing published: the workers serve no generation yet.
  for (const w of before) assert.deepEqual({ connections: w.connections, generations: w.generations }, { connections: 0, generations: [] });

  const stopped = before[0]!;
  process.kill(stopped.pid!, 'SIGSTOP');
  try {
    const r = await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token: gw.tokens.root, timeoutMs: 10_000 });
    assert.equal(r.status, 200, r.text);
    const ws = r.json.workers as LoadedWorker[];
    const silent = ws.find((w) => w.slot === stopped.slot)!;
    assert.equal(silent.pid, stopped.pid);
    assert.equal(silent.state, 'listening');
    assert.ok(!('connections' in silent) && !('generations' in silent), JSON.stringify(silent));
    const other = ws.find((w) => w.slot !== stopped.slot)!;
    assert.deepEqual({ connections: other.connections, generations: other.generations }, { connections: 0, generations: [] });
  } finally {
    process.kill(stopped.pid!, 'SIGCONT');
  }
  // Resumed, it answers again.
  await waitFor('the resumed worker answering', async () => (await workers(gw)).every((w) => w.connections === 0 && Array.isArray(w.generations)));
});
