import { describe, test, type TestContext } from 'node:test';
import { uwsSupport } from '../src/shared/uws-support.js';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { rawRequest } from './helpers/raw-http.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { sleep, waitFor } from './helpers/wait.js';
import type { Json } from './helpers/json.js';
import { slowClient, type Ended } from './helpers/slow-client.js';
import { KeepAliveClient } from './helpers/keep-alive-client.js';

/**
 * Slowloris against the data port: 500 connections from one address dribble a request
 * head a byte a second and never finish it. Each is answered 408 and closed once the
 * header deadline passes, and a client from another address keeps its latency meanwhile.
 */

const HEAD_TIMEOUT_MS = 3_000;
const SAMPLES = 100;
/** The normal client starts a request every 20 ms at most, before and during the attack alike. */
const PACE_MS = 20;

/** `n` sequential requests from 127.0.0.1, each on a fresh connection, one started every `paceMs` at most. */
async function latencies(port: number, n: number, paceMs = 0): Promise<number[]> {
  const out: number[] = [];
  let next = performance.now();
  for (let i = 0; i < n; i++) {
    if (paceMs) await sleep(Math.max(0, next - performance.now()));
    const t0 = performance.now();
    next = t0 + paceMs;
    const r = await rawRequest(port, ['GET /normal HTTP/1.1', 'Host: n.test'], '', 5_000, '127.0.0.1');
    out.push(performance.now() - t0);
    assert.equal(r.status, 200, r.raw.slice(0, 300));
  }
  return out;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;

function headTimeoutLines(gw: Gateway): { count: number; unlogged: number; level: Json }[] {
  return gw
    .logLines()
    .filter((l) => (l as { limit?: string }).limit === 'headerTimeout')
    .map((l) => l as { count: number; unlogged: number; level: Json });
}

/**
 * `attackers` slow heads from `from` while a normal client requests from 127.0.0.1. uWS keeps
 * the first head's deadline per address (it does not say which connection a request came
 * on), so on uws the attackers come from another address; the node engine keeps it per
 * connection, so there they share the good client's address (behind a NAT or a load balancer).
 */
async function slowloris(t: TestContext, engine: 'uws' | 'node', ATTACKERS: number, from: string): Promise<void> {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 1, engine, edit: (c) => (c.limits = { headerTimeoutMs: HEAD_TIMEOUT_MS }) });
  await apply(gw, [
    ['cluster', 'c', { targets: [up.target] }],
    ['route', 'all', { cluster: 'c' }],
  ]);

  await latencies(gw.dataPort, 20); // warm-up: the JIT and the upstream's first connection
  const baseline = await latencies(gw.dataPort, SAMPLES, PACE_MS);

  // Opened in batches of 50, each batch connected before the next: the listen backlog
  // never overflows, so no connect waits out a SYN retransmit and skews its clock.
  const attackers: ReturnType<typeof slowClient>[] = [];
  t.after(() => attackers.forEach((a) => a.socket.destroy()));
  while (attackers.length < ATTACKERS) {
    const batch = Array.from({ length: 50 }, () => slowClient(gw.dataPort, from));
    attackers.push(...batch);
    await waitFor('a batch of attackers to connect', () => batch.every((a) => !a.socket.connecting) || undefined, { timeoutMs: 5_000 });
  }
  let firstEnd = Infinity;
  for (const a of attackers) void a.ended.then(() => (firstEnd = Math.min(firstEnd, performance.now())));
  await sleep(1_000); // every attacker has dribbled a byte or more
  const attackStart = performance.now();
  assert.equal(firstEnd, Infinity, 'every attacker is still open when the measured requests start');
  // Paced over two seconds: every attacker sends a byte or two meanwhile, and the 408s of
  // the first attackers may go out near the end.
  const during = await latencies(gw.dataPort, SAMPLES, PACE_MS);
  const measuredMs = performance.now() - attackStart;

  const giveUp = sleep(HEAD_TIMEOUT_MS + 6_000).then((): Ended => ({ afterMs: Infinity, text: '', how: 'still open' }));
  const ends = await Promise.all(attackers.map((a) => Promise.race([a.ended, giveUp])));
  const [b50, d50] = [quantile(baseline, 0.5), quantile(during, 0.5)];
  t.diagnostic(`client latency: baseline median ${ms(b50)} p95 ${ms(quantile(baseline, 0.95))}; under attack median ${ms(d50)} p95 ${ms(quantile(during, 0.95))} (${SAMPLES} requests in ${ms(measuredMs)}, the first attacker closed ${ms(firstEnd - attackStart)} after they started)`);
  const closeTimes = ends.map((e) => e.afterMs);
  t.diagnostic(`attackers closed after: min ${ms(Math.min(...closeTimes))} median ${ms(quantile(closeTimes, 0.5))} max ${ms(Math.max(...closeTimes))}`);

  assert.ok(d50 <= b50 + 50, `median latency under attack ${ms(d50)} vs baseline ${ms(b50)}`);
  for (const [i, e] of ends.entries()) {
    const what = `attacker ${i} (${e.how} after ${ms(e.afterMs)}): ${JSON.stringify(e.text.slice(0, 300))}`;
    assert.match(e.text, /^HTTP\/1\.1 408 /, what);
    assert.equal(JSON.parse(e.text.slice(e.text.indexOf('\r\n\r\n') + 4)).code, 'Svc.Data.HeadTimeout', what);
    assert.ok(e.how === 'end' || e.how === 'close' || e.how === 'error ECONNRESET', what);
    // Timed from the connect() call, before the worker accepts and starts the deadline;
    // 20 ms of slack for the worker's loop clock, read once per poll of many accepts.
    // uWS's guard runs on its own timer; the node engine's per-connection deadline is held to the second.
    assert.ok(e.afterMs >= HEAD_TIMEOUT_MS - 20 && e.afterMs <= HEAD_TIMEOUT_MS + (engine === 'node' ? 1_000 : 1_500), what);
  }

  // The log carries at most one headerTimeout line a second, each with the running count and
  // the hits left unlogged since the previous line; hits in the last second of the flood
  // are only counted by the next line. A probe that stays silent opens after the flood, so
  // its hit is more than a second after the last one and is logged: its line's count must
  // be every attacker plus the probe, and the lines' counts and unlogged hits must add up.
  const probe = slowClient(gw.dataPort, '127.0.0.3', 1, '');
  t.after(() => probe.socket.destroy());
  const probeEnd = await Promise.race([probe.ended, sleep(HEAD_TIMEOUT_MS + 3_000).then(() => null)]);
  assert.match(probeEnd?.text ?? 'no answer', /^HTTP\/1\.1 408 /);
  const lines = await waitFor('the probe\'s headerTimeout line', () => {
    const ls = headTimeoutLines(gw);
    return ls.at(-1)?.count === ATTACKERS + 1 && ls;
  });
  let accounted = 0;
  for (const l of lines) {
    assert.equal(l.level, 40, 'a warn line');
    assert.equal(l.count, accounted + l.unlogged + 1, `count and unlogged add up: ${JSON.stringify(lines)}`);
    accounted = l.count;
  }
  t.diagnostic(`headerTimeout log lines: ${lines.map((l) => `${l.count} (+${l.unlogged} unlogged)`).join(', ')}`);
}

if (uwsSupport().ok) {
  test('uws engine: 500 slowloris connections each get 408 at the header deadline and a client from another address keeps its latency', { timeout: 60_000 }, (t) => slowloris(t, 'uws', 500, '127.0.0.2'));
}

test('node engine: 300 slowloris connections from the good client\'s own address each get 408 at the header deadline, and the client keeps its latency', { timeout: 60_000 }, (t) => slowloris(t, 'node', 300, '127.0.0.1'));

// The two keep-alive tests below each wait on a timer of their own gateway: side by side.
describe('a second head on a served connection', { concurrency: true }, () => {
  // uWS calls the request handler with the response object only, never saying which
  // connection a request came on, so the guard cannot tell whether this connection's first
  // head was complete: a request came from its address since it opened, and that may be its
  // own. It leaves such a connection alone (no 408), and uWS's idle timer closes it silently.
  //
  // Regression: this uWS build arms setIdleTimeout's timer before a connection's first request
  // and setResponseTimeout's after each answer; with only the first set, this connection stayed
  // open 30 s.
  if (uwsSupport().ok) test(
    'uws engine: a connection that was served once and then dribbles a second head is closed by the idle timer, without a 408',
    { timeout: 30_000 },
    async (t) => {
      const IDLE_S = 2;
      const HEAD_MS = 1_000;
      const up = await startUpstream(t);
      const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 1, engine: 'uws', edit: (c) => (c.limits = { idleTimeoutS: IDLE_S, headerTimeoutMs: HEAD_MS }) });
      await apply(gw, [
        ['cluster', 'c', { targets: [up.target] }],
        ['route', 'all', { cluster: 'c' }],
      ]);

      const client = new KeepAliveClient(gw.dataPort);
      t.after(() => client.socket.destroy());
      const opened = performance.now();
      await client.connected();
      // Answered after the header deadline: the deadline passes while this connection is
      // open, and uWS arms no idle timer while an answer is pending.
      client.socket.write(`GET /one HTTP/1.1\r\nHost: a.test\r\nX-Up-Delay-Ms: ${HEAD_MS + 500}\r\n\r\n`);
      const first = await client.answer();
      const served = performance.now();
      const received = client.received;
      assert.equal(first?.status, 200, received);
      assert.ok(served - opened > HEAD_MS, 'the header deadline passed before the answer');
      const second = 'GET /two HTTP/1.1\r\nHost: a.test\r\nX-Slow: ' + 'a'.repeat(100);
      let sent = 0;
      const drip = setInterval(() => client.socket.writable && client.socket.write(second[sent++]!), 250);
      t.after(() => clearInterval(drip));

      const how = await Promise.race([client.closed, sleep((IDLE_S + 5) * 1_000).then(() => 'still open')]);
      clearInterval(drip);
      t.diagnostic(`${how} ${ms(performance.now() - served)} after the first answer, ${sent} bytes of the second head sent`);
      assert.ok(how === 'end' || how === 'error ECONNRESET', `the server closed the connection: ${how}`);
      assert.ok(sent >= 1, 'the second head was dribbling when it closed');
      assert.equal(client.received, received, 'nothing was written after the first answer (no 408)');
      assert.equal(headTimeoutLines(gw).length, 0, 'no headerTimeout was counted');
    },
  );

  // The node engine knows which connection a head came on: every head has the deadline.
  test('node engine: a connection that was served once and then dribbles a second head gets 408 at the header deadline', { timeout: 30_000 }, async (t) => {
    const HEAD_MS = 1_000;
    const up = await startUpstream(t);
    const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 1, engine: 'node', edit: (c) => (c.limits = { idleTimeoutS: 20, headerTimeoutMs: HEAD_MS }) });
    await apply(gw, [
      ['cluster', 'c', { targets: [up.target] }],
      ['route', 'all', { cluster: 'c' }],
    ]);
    const client = new KeepAliveClient(gw.dataPort);
    t.after(() => client.socket.destroy());
    await client.connected();
    client.socket.write('GET /one HTTP/1.1\r\nHost: a.test\r\n\r\n');
    assert.equal((await client.answer())?.status, 200);
    const received = client.received.length;
    const second = 'GET /two HTTP/1.1\r\nHost: a.test\r\nX-Slow: ' + 'a'.repeat(100);
    let sent = 0;
    const started = performance.now();
    const drip = setInterval(() => client.socket.writable && client.socket.write(second[sent++]!), 100);
    t.after(() => clearInterval(drip));
    const how = await Promise.race([client.closed, sleep(HEAD_MS + 5_000).then(() => 'still open')]);
    clearInterval(drip);
    const after = performance.now() - started;
    t.diagnostic(`${how} ${ms(after)} after the second head started`);
    const answer = client.received.slice(received);
    assert.match(answer, /^HTTP\/1\.1 408 /, answer);
    assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).code, 'Svc.Data.HeadTimeout');
    assert.ok(after >= HEAD_MS - 20 && after <= HEAD_MS + 1_500, `closed ${ms(after)} after the head started`);
  });
});
