import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Agent, request as undiciRequest } from 'undici';
import { ROOT, startGateway, type Gateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED, sleep, waitFor } from './helpers/wait.js';

// Steps that fail on purpose come from a step package installed by worker.json `steps.packages`
// (no built-in step throws or hangs): test/fixtures/step-packages/failing-steps.
const FIXTURE = join(ROOT, 'test', 'fixtures', 'step-packages', 'failing-steps');

/** `switchyard_step_failures_total` samples, keyed `route step reason`. */
async function stepFailures(gw: Gateway): Promise<Record<string, number>> {
  const r = await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root! });
  assert.equal(r.status, 200);
  const out: Record<string, number> = {};
  for (const m of r.text.matchAll(/^switchyard_step_failures_total\{tenant="default",route="([^"]+)",step="([^"]+)",reason="([^"]+)"\} (\d+)$/gm)) out[`${m[1]} ${m[2]} ${m[3]}`] = Number(m[4]);
  return out;
}

async function workerPids(gw: Gateway): Promise<number[]> {
  const s = await clusterStatus(gw);
  assert.ok(s.workers.every((w) => w.state === 'listening' && w.restarts === 0), JSON.stringify(s.workers));
  return s.workers.map((w) => w.pid!).sort();
}

test('a step that fails: its requests only answer 500 (threw) or 504 (past its budget), counted, the workers unharmed', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 2, edit: (c) => void (c.steps = { packages: [FIXTURE] }) });
  await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'boom', { cluster: 'up', pathPrefix: '/boom', steps: [{ code: 'request-headers', settings: { set: { 'x-a': '1' } } }, { code: 'test-throws' }] }],
    ['route', 'fine', { cluster: 'up', pathPrefix: '/fine', steps: [{ code: 'request-headers', settings: { set: { 'x-a': '1' } } }] }],
    ['route', 'hangs', { cluster: 'up', pathPrefix: '/hangs', steps: [{ code: 'test-hangs', timeoutMs: 150 }] }],
    ['route', 'late', { cluster: 'up', pathPrefix: '/late', steps: [{ code: 'test-rejects-late', timeoutMs: 50 }] }],
    ['route', 'late-value', { cluster: 'up', pathPrefix: '/late-value', steps: [{ code: 'test-resolves-late', timeoutMs: 50 }] }],
    ['route', 'in-time', { cluster: 'up', pathPrefix: '/in-time', steps: [{ code: 'test-resolves-late', timeoutMs: 5_000 }] }],
    ['route', 'hook', { cluster: 'up', pathPrefix: '/hook', steps: [{ code: 'test-hook-throws' }] }],
    ['route', 'floating', { cluster: 'up', pathPrefix: '/floating', steps: [{ code: 'test-floating-reject' }] }],
    ['route', 'timer', { cluster: 'up', pathPrefix: '/timer', steps: [{ code: 'test-timer-throws' }] }],
  ]);
  const pids = await workerPids(gw);

  await t.test('1,000 requests through a throwing step: 500 Svc.Data.StepFailed each, another route 200 throughout, counted 1,000', async () => {
    const agent = new Agent({ connections: 8 });
    t.after(() => agent.close());
    const get = async (path: string) => {
      const r = await undiciRequest(`${gw.dataUrl}${path}`, { dispatcher: agent });
      const body = await r.body.text();
      return { status: r.statusCode, body };
    };
    let done = false;
    const fine: number[] = [];
    const beside = (async () => {
      while (!done) fine.push((await get('/fine')).status);
    })();
    const codes = new Map<string, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < 1_000) {
          next++;
          const r = await get('/boom');
          const key = `${r.status} ${(JSON.parse(r.body) as { code: string }).code}`;
          codes.set(key, (codes.get(key) ?? 0) + 1);
        }
      }),
    );
    done = true;
    await beside;
    assert.deepEqual([...codes], [['500 Svc.Data.StepFailed', 1_000]]);
    assert.ok(fine.length > 0 && fine.every((s) => s === 200), `the other route answered ${[...new Set(fine)].join(',')} over ${fine.length} requests`);
    assert.equal(up.requests.filter((r) => r.url.startsWith('/boom')).length, 0, 'nothing of the failed requests went upstream');
    await waitFor('the failures counted', async () => ((await stepFailures(gw))['boom test-throws threw'] === 1_000 ? true : false), { timeoutMs: 10_000 });
    assert.deepEqual(await workerPids(gw), pids, 'the same worker processes');
    const logged = gw.logLines().filter((l) => l.msg?.startsWith('step failed') && l.route === 'default/boom' && l.step === 'test-throws');
    assert.equal(logged.length, 1_000, 'each failure logged with its route and step');
  });

  await t.test('a step that never settles: 504 Svc.Data.StepTimeout at its budget, counted as a timeout', async () => {
    const t0 = Date.now();
    const r = await request(`${gw.dataUrl}/hangs`, { timeoutMs: 10_000 });
    const ms = Date.now() - t0;
    assert.equal(r.status, 504, r.text);
    assert.equal(r.json.code, 'Svc.Data.StepTimeout');
    assert.equal(typeof r.json.traceId, 'string');
    assert.ok(ms >= 140, `answered after ${ms} ms: not before the budget`);
    await waitFor('the timeout counted', async () => ((await stepFailures(gw))['hangs test-hangs timeout'] === 1 ? true : false), { timeoutMs: 10_000 });
    const line = gw.logLines().find((l) => l.msg?.startsWith('step timed out'));
    assert.ok(line && line.route === 'default/hangs' && line.step === 'test-hangs' && line.timeoutMs === 150, JSON.stringify(line));
  });

  await t.test('a late rejection and a late value are dropped: 504, nothing unhandled, no crash; in time, the step\'s own answer', async () => {
    for (const path of ['/late', '/late-value']) {
      const r = await request(`${gw.dataUrl}${path}`, { headers: { 'x-settle-ms': '250' } });
      assert.equal(r.status, 504, `${path}: ${r.text}`);
      assert.equal(r.json.code, 'Svc.Data.StepTimeout');
    }
    await sleep(500); // both settled late meanwhile
    const inTime = await request(`${gw.dataUrl}/in-time`, { headers: { 'x-settle-ms': '20' } });
    assert.equal(inTime.status, 299, 'settled within its budget: its answer');
    assert.equal(inTime.text, 'late answer');
    assert.deepEqual(await workerPids(gw), pids, 'no worker died');
    assert.doesNotMatch(gw.stderr(), /unhandled|rejected after its budget/i, 'the late rejection was never logged');
    const counted = await waitFor('both timeouts counted', async () => {
      const c = await stepFailures(gw);
      return c['late test-rejects-late timeout'] === 1 && c['late-value test-resolves-late timeout'] === 1 ? c : false;
    }, { timeoutMs: 10_000 });
    assert.equal(counted['in-time test-resolves-late timeout'], undefined);
  });

  await t.test("a step's response hook that throws: 500 Svc.Data.StepFailed, counted as the step's failure, not the upstream's", async () => {
    for (const headers of [{}, { 'x-own-answer': '1' }]) {
      const r = await request(`${gw.dataUrl}/hook`, { headers });
      assert.equal(r.status, 500, r.text);
      assert.equal(r.json.code, 'Svc.Data.StepFailed');
    }
    await waitFor('both counted', async () => ((await stepFailures(gw))['hook test-hook-throws threw'] === 2 ? true : false), { timeoutMs: 10_000 });
    const metrics = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root! })).text;
    assert.doesNotMatch(metrics, /^switchyard_upstream_errors_total\{[^}]*cluster="up"[^}]*\} [1-9]/m, 'the upstream answered: no upstream error');
    assert.deepEqual(await workerPids(gw), pids, 'no worker died');
  });

  await t.test("a step's floating rejection: its requests pass, the worker serves on, the log names the step last started", async () => {
    for (let i = 0; i < 50; i++) assert.equal((await request(`${gw.dataUrl}/floating`)).status, 200);
    const line = await waitFor('the rejection logged', () => gw.logLines().find((l) => l.msg?.startsWith('a promise rejected unhandled')), { timeoutMs: 5_000 });
    assert.equal((line as { lastStep?: string }).lastStep, 'default/floating test-floating-reject');
    assert.deepEqual(await workerPids(gw), pids, 'no worker died');
  });

  await t.test("a step's callback that throws: the request passes, the worker is replaced after a drain, nothing else fails", async () => {
    assert.equal((await request(`${gw.dataUrl}/timer`)).status, 200);
    const replaced = await waitFor('a worker replaced', async () => {
      const s = await clusterStatus(gw);
      const now = s.workers.filter((w) => w.state === 'listening').map((w) => w.pid!).sort();
      return now.length === 2 && now.join() !== pids.join() ? s : undefined;
    }, { timeoutMs: 15_000, intervalMs: 100 });
    assert.equal(replaced.workers.filter((w) => w.state === 'listening' && w.restarts === 1).length, 1, 'one worker, the faulted one');
    const line = gw.logLines().find((l) => l.msg?.startsWith('uncaught exception'));
    assert.equal((line as { lastStep?: string } | undefined)?.lastStep, 'default/timer test-timer-throws');
    const metrics = (await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root! })).text;
    assert.match(metrics, /^switchyard_worker_replacements_total\{reason="fault"\} 1$/m);
    for (let i = 0; i < 20; i++) assert.equal((await request(`${gw.dataUrl}/fine`)).status, 200);
  });
});
