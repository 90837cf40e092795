import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { request, type HttpResult } from './helpers/http.js';
import { freePort, silentPort } from './helpers/ports.js';
import { BOUNDED, sleep, waitFor } from './helpers/wait.js';

const describe = (r: HttpResult) => `${r.status} ${r.text.slice(0, 160)}`;

/** `count` requests, `width` at a time; the descriptions of those that did not answer 200. */
async function failures(count: number, width: number, send: (i: number) => Promise<HttpResult>): Promise<string[]> {
  const failed: string[] = [];
  for (let i = 0; i < count; i += width) {
    const batch = await Promise.all(Array.from({ length: Math.min(width, count - i) }, (_, k) => send(i + k)));
    batch.forEach((r, k) => r.status !== 200 && failed.push(`#${i + k}: ${describe(r)}`));
  }
  return failed;
}

/** A body of `n` bytes that differs per request, and a check that the upstream echo got it whole. */
function uploads(up: Upstream) {
  const body = (i: number) => Buffer.alloc(64 * 1024, `upload ${i};`);
  return {
    send: (url: string, method: string, i: number) => request(url, { method, body: body(i), headers: { 'x-id': `${method}-${i}` } }),
    check(r: HttpResult, method: string, i: number): string | null {
      if (r.status !== 200) return `${method} #${i}: ${describe(r)}`;
      if (r.json?.bodySha256 !== createHash('sha256').update(body(i)).digest('hex')) return `${method} #${i}: body arrived as ${r.json?.bodyBytes} bytes`;
      const seen = up.requests.filter((q) => q.headers['x-id'] === `${method}-${i}`).length;
      return seen === 1 ? null : `${method} #${i} reached the upstream ${seen} times`;
    },
  };
}

test('a cluster [closed port, live]: no request fails, streamed uploads included; the dead target is held off, then tried again', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const dead = await freePort();
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 2 });
  await apply(gw, [
    ['cluster', 'half', { targets: [`127.0.0.1:${dead}`, up.target] }],
    ['route', 'all', { cluster: 'half', pathPrefix: '/' }],
  ]);
  assert.deepEqual(await failures(200, 10, (i) => request(`${gw.dataUrl}/g${i}`)), []);

  const u = uploads(up);
  const problems: string[] = [];
  for (const method of ['POST', 'PUT']) {
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => u.send(`${gw.dataUrl}/up`, method, i)));
    answers.forEach((r, i) => problems.push(u.check(r, method, i) ?? ''));
  }
  assert.deepEqual(problems.filter(Boolean), []);

  // Across more than the hold-off: the dead target comes round again and is passed over again.
  await sleep(1_200);
  assert.deepEqual(await failures(40, 4, (i) => request(`${gw.dataUrl}/later${i}`)), []);

  // Brought back to life, the target gets traffic again once its hold-off ran out.
  let revived = 0;
  const back = createServer((_req, res) => {
    revived++;
    res.end('back');
  });
  await new Promise<void>((r) => back.listen(dead, '127.0.0.1', r));
  t.after(() => new Promise((r) => back.close(r)));
  await waitFor('the revived target to be picked again', async () => {
    assert.deepEqual(await failures(8, 4, (i) => request(`${gw.dataUrl}/again${i}`)), []);
    return revived > 0;
  }, { timeoutMs: 10_000, intervalMs: 100 });
});

test('a streamed POST whose first target refuses is sent whole to the other target (one worker: the first pick is the dead target)', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const dead = await freePort();
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 1 });
  await apply(gw, [
    ['cluster', 'half', { targets: [`127.0.0.1:${dead}`, up.target] }],
    ['route', 'all', { cluster: 'half', pathPrefix: '/' }],
  ]);
  const u = uploads(up);
  const problems = [u.check(await u.send(`${gw.dataUrl}/first`, 'POST', 0), 'POST', 0)];
  // Once the hold-off ran out, one of two requests picks the dead target again.
  await sleep(1_100);
  for (const i of [1, 2]) problems.push(u.check(await u.send(`${gw.dataUrl}/after`, 'POST', i), 'POST', i));
  assert.deepEqual(problems.filter(Boolean), []);
});

test('a cluster [silent port, live] with connectMs 500: the connect times out and the request goes to the live target', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const silent = await silentPort(t);
  // The port really never completes a handshake.
  const probe = connect(silent, '127.0.0.1').on('error', () => {});
  const connected = await Promise.race([new Promise((r) => probe.once('connect', () => r(true))), sleep(600).then(() => false)]);
  probe.destroy();
  assert.equal(connected, false, 'the silent port completed a handshake');

  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 2 });
  await apply(gw, [
    ['cluster', 'half', { targets: [`127.0.0.1:${silent}`, up.target], timeouts: { connectMs: 500 } }],
    ['route', 'all', { cluster: 'half', pathPrefix: '/' }],
  ]);
  assert.deepEqual(await failures(20, 1, (i) => request(`${gw.dataUrl}/s${i}`)), []);
  const u = uploads(up);
  const problems: string[] = [];
  for (let i = 0; i < 4; i++) problems.push(u.check(await u.send(`${gw.dataUrl}/up`, 'POST', i), 'POST', i) ?? '');
  assert.deepEqual(problems.filter(Boolean), []);
});

test('mirror copies to a cluster with a dead target go to its live target while the dead one is held off', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const shadow = await startUpstream(t);
  const dead = await freePort();
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 1 });
  await apply(gw, [
    ['cluster', 'main', { targets: [up.target] }],
    ['cluster', 'shadow', { targets: [`127.0.0.1:${dead}`, shadow.target] }],
    ['route', 'all', { cluster: 'main', pathPrefix: '/', steps: [{ code: 'mirror', settings: { cluster: 'shadow', percent: 100 } }] }],
  ]);
  const started = Date.now();
  for (let i = 0; i < 40; i++) assert.equal((await request(`${gw.dataUrl}/m${i}`)).status, 200);
  const seconds = Math.ceil((Date.now() - started) / 1_000);
  // Round robin alone would send half the copies to the dead target; with the hold-off, one
  // copy a second is lost at most.
  await waitFor('the mirror copies', () => shadow.requests.length >= 40 - seconds - 1, { timeoutMs: 5_000 });
});

test('a request that waited in the budget queue still fails over when its connection then cannot be made', BOUNDED, async (t) => {
  // Regression: the queue hands a waiting handler an onConnect (its abort), which was taken
  // as "the request was written", so a connect failure after the wait answered 502.
  const live = await startUpstream(t);
  let release: (() => void) | null = null;
  const held = createServer((req, res) => {
    res.setHeader('connection', 'close'); // the next request on this target needs a new connection
    release = () => res.end('held');
  });
  await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
  t.after(() => {
    held.closeAllConnections();
    held.close();
  });
  const heldTarget = `127.0.0.1:${(held.address() as { port: number }).port}`;
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 1 });
  await apply(gw, [
    ['cluster', 'pair', { targets: [heldTarget, live.target], connections: { perTarget: 1 } }],
    ['route', 'all', { cluster: 'pair', pathPrefix: '/' }],
  ]);
  const first = request(`${gw.dataUrl}/first`); // round robin: the held target, which keeps it
  await waitFor('the held target has the first request', () => release !== null);
  assert.equal((await request(`${gw.dataUrl}/second`)).status, 200); // the live target
  const third = request(`${gw.dataUrl}/third`); // the held target again: waits for its one connection
  await sleep(100);
  held.close(); // new connections to the held target are now refused
  release!();
  assert.equal((await first).text, 'held');
  const r = await third;
  assert.equal(r.status, 200, describe(r));
  assert.ok(live.requests.some((q) => q.url === '/third'), 'the waiting request went to the live target');
});
