import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, apply, clusterStatus, publishRaw, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED, sleep } from './helpers/wait.js';

test('a worker that dies before it acks a publish: the publish answers at once, and only the dead worker is replaced', BOUNDED, async (t) => {
  // Regression: the publish waited the full 10 s ack timeout, answered 503, then killed the
  // healthy replacement (which had booted with the new generation).
  const gw = await startGateway(t, { workers: 1, keys: [ROOT_KEY] });
  await apply(gw, [['route', 'r', { directResponse: { statusCode: 200, body: 'one' } }]]);
  const victim = (await clusterStatus(gw)).workers[0]!.pid!;
  await setEntity(gw, 'route', 'r', { directResponse: { statusCode: 200, body: 'two' } });
  process.kill(victim, 'SIGSTOP'); // busy, say building a large generation…
  const started = Date.now();
  const publish = publishRaw(gw, 'default', 20_000);
  await sleep(300);
  process.kill(victim, 'SIGKILL'); // …and it dies before it acks
  const r = await publish;
  assert.equal(r.status, 200, r.text);
  assert.ok(Date.now() - started < 5_000, `answered after ${Date.now() - started} ms`);
  await sleep(1_500);
  const after = await clusterStatus(gw);
  assert.equal(after.workers[0]!.restarts, 1, 'one replacement, left alone');
  assert.equal(after.workers[0]!.generation, r.json.generation);
  assert.equal((await request(`${gw.dataUrl}/`)).text, 'two');
});

test('a worker crashing while the supervisor compiles a publish does not take the supervisor down', BOUNDED, async (t) => {
  // Regression: the broadcast wrote to the dead worker's closed IPC pipe before the
  // supervisor saw it exit; the unheard 'error' event (EPIPE) ended the supervisor, and
  // with it every worker: both ports down.
  const gw = await startGateway(t, { workers: 2, keys: [ROOT_KEY], logLevel: 'warn' });
  const token = gw.tokens.root!;
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let k; (k = next++) < 2_000; ) {
        const body = JSON.stringify({ pathPrefix: `/p${k}/`, directResponse: { statusCode: 200, body: `route ${k}` } });
        const res = await fetch(`${gw.adminUrl}/api/v1/default/config/set/route/r${k}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
        await res.arrayBuffer();
      }
    }),
  );
  let t0 = Date.now();
  assert.equal((await publishRaw(gw, 'default', 60_000)).status, 200);
  const compileMs = Date.now() - t0;
  for (let attempt = 0; attempt < 4 && gw.exit() === null; attempt++) {
    await setEntity(gw, 'route', 'r0', { pathPrefix: '/p0/', directResponse: { statusCode: 200, body: `v${attempt}` } });
    const victim = (await clusterStatus(gw)).workers.find((w) => w.state === 'listening')!.pid!;
    t0 = Date.now();
    const publish = publishRaw(gw, 'default', 30_000).then((x) => x.status, () => 0);
    await sleep(Math.max(20, compileMs / 3)); // the supervisor is compiling
    process.kill(victim, 'SIGKILL');
    assert.equal(await publish, 200, `attempt ${attempt}`);
    await sleep(1_500);
  }
  assert.equal(gw.exit(), null, `the supervisor is alive:\n${gw.stderr().split('\n').filter((l) => /EPIPE|ERR_IPC|Unhandled/.test(l)).join('\n')}`);
  assert.equal((await request(`${gw.dataUrl}/p0/`)).text, 'v3');
});
