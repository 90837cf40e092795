import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { sleep, waitFor } from './helpers/wait.js';
import { openDescriptors } from './helpers/proc.js';
import { KeepAliveClient } from './helpers/keep-alive-client.js';
import { HEAD_GRACE_MS } from '../src/admin/eviction-order.js';

/**
 * Floods from many addresses against the admin port: the supervisor runs under a
 * 1,024-descriptor limit; 1,100 clients spread over 100 loopback addresses (11 each, under
 * the per-address cap), each reconnecting as soon as it is closed. The slowloris clients
 * send half a head, never read and add a header line every 500 ms, for 30 s; the
 * keep-alive ones complete a GET /healthz every 500 ms and hold their connections between,
 * for 12 s. The operator calls whoami from 127.0.0.1 every 100 ms with a 2 s client timeout.
 */

const CLIENTS = 1_100;
const ADDRESSES = 100;
const FLOOD_MS = 30_000;
const TRICKLE_MS = 500;
const OPERATOR_TIMEOUT_MS = 2_000;
const HEALTHZ_FLOOD_MS = 12_000;
const HEALTHZ_PAUSE_MS = 500;

/** One attacker slot: keeps a half-sent head open from `localAddress`, reconnecting while `on()` holds. */
function slowlorisSlot(port: number, localAddress: string, on: () => boolean, counts: { connects: number }): () => void {
  let socket: Socket | null = null;
  let trickle: NodeJS.Timeout | null = null;
  const open = () => {
    if (!on()) return;
    counts.connects++;
    const s = connect({ host: '127.0.0.1', port, localAddress, allowHalfOpen: true });
    socket = s;
    s.pause(); // never reads: the server's answer and FIN stay unread
    s.on('error', () => {});
    s.once('close', () => {
      if (trickle) clearInterval(trickle);
      if (socket === s) setTimeout(open, 20);
    });
    s.write('GET /api/v1/sys/whoami HTTP/1.1\r\nHost: admin\r\n');
    // The second write after the server closed fails (EPIPE/ECONNRESET): that is how a client that never reads learns it.
    trickle = setInterval(() => s.write('X-Pad: 1\r\n'), TRICKLE_MS);
  };
  open();
  return () => {
    if (trickle) clearInterval(trickle);
    const s = socket;
    socket = null;
    s?.destroy();
  };
}

/**
 * One attacker slot: a keep-alive connection from `localAddress` that asks GET /healthz,
 * reads the answer, asks again HEALTHZ_PAUSE_MS later, and reconnects as soon as it is
 * closed while `on()` holds: every head complete, every call answered at once.
 */
function healthzSlot(port: number, localAddress: string, on: () => boolean, counts: { connects: number; answers: number }): () => void {
  let socket: Socket | null = null;
  let next: NodeJS.Timeout | null = null;
  const ask = (s: Socket) => void (socket === s && !s.destroyed && s.write('GET /healthz HTTP/1.1\r\nHost: admin\r\n\r\n'));
  const open = () => {
    if (!on()) return;
    counts.connects++;
    const s = connect({ host: '127.0.0.1', port, localAddress });
    socket = s;
    s.on('error', () => {});
    s.setEncoding('latin1').on('data', (d: string) => {
      if (d.startsWith('HTTP/1.1 200')) counts.answers++;
      next ??= setTimeout(() => ((next = null), ask(s)), HEALTHZ_PAUSE_MS);
    });
    s.once('close', () => {
      if (next) clearTimeout(next);
      next = null;
      if (socket === s) setTimeout(open, 20);
    });
    ask(s);
  };
  open();
  return () => {
    if (next) clearTimeout(next);
    const s = socket;
    socket = null;
    s?.destroy();
  };
}

/** A gateway under a 1,024-descriptor limit, its root token, and its descriptors once settled. */
async function limitedGateway(t: TestContext) {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  execFileSync('prlimit', ['--nofile=1024:1024', '--pid', String(gw.pid)]);
  const token = gw.tokens.root!;
  assert.equal((await request(`${gw.adminUrl}/api/v1/sys/whoami`, { token })).status, 200);
  await sleep(200);
  return { gw, token, baseline: openDescriptors(gw.pid) };
}

/**
 * The operator: whoami on a fresh connection from 127.0.0.1, one call at a time, one
 * started every ~100 ms with a 2 s timeout, while `flooding()` and for 3 s after `stop`;
 * `peak` is the most descriptors the supervisor held meanwhile.
 */
function operator(gw: Gateway, token: string, flooding: () => boolean) {
  const whoami = () => request(`${gw.adminUrl}/api/v1/sys/whoami`, { token, timeoutMs: OPERATOR_TIMEOUT_MS }).then((r) => r.status, (e: Error) => e.message);
  const calls = { during: [] as (number | string)[], after: [] as (number | string)[], peak: 0 };
  let operating = true;
  const running = (async () => {
    while (operating) {
      const into = flooding() ? calls.during : calls.after;
      const started = Date.now();
      into.push(await whoami());
      calls.peak = Math.max(calls.peak, openDescriptors(gw.pid));
      await sleep(Math.max(0, 100 - (Date.now() - started)));
    }
  })();
  return {
    calls,
    async stop() {
      await sleep(3_000);
      operating = false;
      await running;
      const ok = calls.during.filter((a) => a === 200).length;
      return { ...calls, ok, ratio: ok / calls.during.length, failures: [...new Set(calls.during.filter((a) => a !== 200))].slice(0, 5) };
    },
  };
}

test('1,100 slowloris clients from 100 addresses that keep reconnecting: the operator keeps at least 90 % of its calls, all once they stop, and the descriptors come back', { timeout: 90_000 }, async (t) => {
  const { gw, token, baseline } = await limitedGateway(t);
  const pid = gw.pid;

  let flooding = true;
  const counts = { connects: 0 };
  const stops: (() => void)[] = [];
  t.after(() => {
    flooding = false;
    stops.forEach((stop) => stop());
  });
  for (let i = 0; i < CLIENTS; i++) stops.push(slowlorisSlot(gw.adminPort, `127.0.0.${2 + (i % ADDRESSES)}`, () => flooding, counts));

  // A client that keeps one connection and completes a call every 250 ms is never cut.
  const keepAlive = new KeepAliveClient(gw.adminPort);
  t.after(() => keepAlive.socket.destroy());
  const keptAnswers: (number | null)[] = [];
  const keptCalls = (async () => {
    while (flooding) {
      keepAlive.socket.write(`GET /api/v1/sys/whoami HTTP/1.1\r\nHost: admin\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      keptAnswers.push((await keepAlive.answer(OPERATOR_TIMEOUT_MS))?.status ?? null);
      await sleep(250);
    }
  })();

  const op = operator(gw, token, () => flooding);
  await sleep(FLOOD_MS);
  flooding = false;
  stops.forEach((stop) => stop());
  const floodConnects = counts.connects;
  await keptCalls;
  const { during, after, ok, ratio, failures, peak } = await op.stop();

  t.diagnostic(`operator calls during the flood: ${ok}/${during.length} answered 200 (${(ratio * 100).toFixed(1)} %); after it: ${after.filter((a) => a === 200).length}/${after.length}; keep-alive: ${keptAnswers.filter((a) => a === 200).length}/${keptAnswers.length}`);
  t.diagnostic(`flood connections made: ${floodConnects}; supervisor descriptors: baseline ${baseline}, peak ${peak} (limit 1024)`);
  // The flood pressed on the cap: far more connections than the limit, and the supervisor filled up to near it.
  assert.ok(floodConnects > 2 * CLIENTS, `the clients kept reconnecting: ${floodConnects} connections`);
  assert.ok(peak > 512, `the flood held hundreds of the supervisor's descriptors: peak ${peak}`);
  assert.ok(peak < 1024, `the supervisor never reached its descriptor limit: peak ${peak}`);
  assert.ok(during.length >= 150, `the operator kept calling: ${during.length} calls in ${FLOOD_MS} ms`);
  assert.ok(ratio >= 0.9, `at least 90 % of the operator's calls succeed during the flood: ${ok}/${during.length}; failures such as ${JSON.stringify(failures)}`);
  assert.ok(keptAnswers.length >= 60 && keptAnswers.every((a) => a === 200), `every call on the keep-alive connection succeeded: ${JSON.stringify(keptAnswers.filter((a) => a !== 200))} of ${keptAnswers.length}`);
  assert.ok(!keepAlive.socket.destroyed, 'the keep-alive connection stayed open through the flood');
  assert.ok(after.length >= 10, `the operator kept calling after the flood: ${after.length} calls`);
  assert.deepEqual(after.filter((a) => a !== 200), [], 'every call after the flood succeeds');

  await waitFor('the supervisor descriptors back near baseline', () => openDescriptors(pid) <= baseline + 4 || undefined, { timeoutMs: 5_000, intervalMs: 50 });
  const shed = gw.logLines().filter((l) => (l as { msg?: string }).msg === 'admin connections shed');
  assert.ok(shed.length > 0, 'the supervisor logged the connections it shed');
});

test('1,100 keep-alive clients from 100 addresses that complete their heads, ask /healthz and reconnect when closed: the operator keeps at least 90 % of its calls, all once they stop', { timeout: 60_000 }, async (t) => {
  const { gw, token, baseline } = await limitedGateway(t);

  let flooding = true;
  const counts = { connects: 0, answers: 0 };
  const stops: (() => void)[] = [];
  t.after(() => {
    flooding = false;
    stops.forEach((stop) => stop());
  });
  for (let i = 0; i < CLIENTS; i++) stops.push(healthzSlot(gw.adminPort, `127.0.0.${2 + (i % ADDRESSES)}`, () => flooding, counts));

  const op = operator(gw, token, () => flooding);
  await sleep(HEALTHZ_FLOOD_MS);
  flooding = false;
  stops.forEach((stop) => stop());
  const { connects, answers } = counts;
  const { during, after, ok, ratio, failures, peak } = await op.stop();

  t.diagnostic(`operator calls during the flood: ${ok}/${during.length} answered 200 (${(ratio * 100).toFixed(1)} %); after it: ${after.filter((a) => a === 200).length}/${after.length}`);
  t.diagnostic(`flood connections made: ${connects}, /healthz answers: ${answers}; supervisor descriptors: baseline ${baseline}, peak ${peak} (limit 1024)`);
  // More clients than the cap: every new connection closed another, and the calls were answered.
  assert.ok(connects > 1.5 * CLIENTS, `the clients were closed and reconnected: ${connects} connections`);
  assert.ok(answers > CLIENTS, `the flood's calls were answered: ${answers}`);
  assert.ok(peak > 512 && peak < 1024, `the flood held hundreds of the supervisor's descriptors, never all: peak ${peak}`);
  assert.ok(during.length >= 30, `the operator kept calling: ${during.length} calls in ${HEALTHZ_FLOOD_MS} ms`);
  assert.ok(ratio >= 0.9, `at least 90 % of the operator's calls succeed during the flood: ${ok}/${during.length}; failures such as ${JSON.stringify(failures)}`);
  assert.ok(after.length >= 10, `the operator kept calling after the flood: ${after.length} calls`);
  assert.deepEqual(after.filter((a) => a !== 200), [], 'every call after the flood succeeds');
});

/** A connection that sends half a head and reads what comes back; `closed` resolves with it and when. */
function halfHead(port: number, localAddress: string): { socket: Socket; opened: number; closed: Promise<{ at: number; text: string }> } {
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  socket.on('error', () => {});
  socket.write('GET /api/v1/sys/whoami HTTP/1.1\r\nHost: admin\r\n');
  let text = '';
  const closed = new Promise<{ at: number; text: string }>((resolve) => {
    socket.setEncoding('latin1').on('data', (d: string) => (text += d)).on('close', () => resolve({ at: Date.now(), text }));
  });
  return { socket, opened: Date.now(), closed };
}

test('at admin.maxConnections a new connection closes the oldest headless one with 408, a keep-alive client between calls is kept, and a full port gives heads 1 s', { timeout: 30_000 }, async (t) => {
  const CAP = 16;
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: (c) => void (c.admin.maxConnections = CAP) });
  const token = gw.tokens.root!;
  const call = `GET /api/v1/sys/whoami HTTP/1.1\r\nHost: admin\r\nAuthorization: Bearer ${token}\r\n\r\n`;
  const keepAlive = new KeepAliveClient(gw.adminPort);
  t.after(() => keepAlive.socket.destroy());
  keepAlive.socket.write(call);
  assert.equal((await keepAlive.answer())?.status, 200);

  // The keep-alive connection and CAP - 1 headless ones: the port is full.
  const headless = Array.from({ length: CAP - 1 }, (_, i) => halfHead(gw.adminPort, `127.0.0.${2 + i}`));
  t.after(() => headless.forEach((h) => h.socket.destroy()));
  await Promise.all(headless.map((h) => new Promise((r) => (h.socket.connecting ? h.socket.once('connect', r) : r(null)))));
  // Past the grace a head gets: the headless ones are stale, closed before an idle keep-alive connection.
  await sleep(HEAD_GRACE_MS + 100);

  const r = await request(`${gw.adminUrl}/api/v1/sys/whoami`, { token, timeoutMs: 2_000 });
  assert.equal(r.status, 200, 'a call over the cap gets in');
  const oldest = await Promise.race([headless[0]!.closed, sleep(500).then(() => null)]);
  assert.ok(oldest, 'the oldest headless connection was closed for it');
  assert.match(oldest.text, /^HTTP\/1\.1 408 /, oldest.text);
  assert.match(oldest.text, /"code":"Svc\.Request\.Timeout"/);
  keepAlive.socket.write(call);
  assert.equal((await keepAlive.answer())?.status, 200, 'the keep-alive connection between calls was kept');

  // At the cap the head deadline is 1 s, not 10 s (swept every 250 ms).
  for (const h of headless.slice(1)) {
    const { at, text } = await h.closed;
    assert.match(text, /^HTTP\/1\.1 408 /, text);
    assert.ok(at - h.opened < 2_500, `a headless connection on a full port was closed ${at - h.opened} ms after it opened`);
  }

  await t.test('a port full of idle keep-alive connections: a new call and a connection right behind it close the longest idle unauthenticated one, not the call nor the operator’s authenticated one', async () => {
    // The first keep-alive client and CAP - 2 more, each idle after a call: the call fills the port.
    const idle = Array.from({ length: CAP - 2 }, (_, i) => new KeepAliveClient(gw.adminPort, `127.0.0.${2 + i}`));
    t.after(() => idle.forEach((c) => c.socket.destroy()));
    for (const c of idle) assert.equal((await c.get('/healthz'))?.status, 200);
    // The call and the newcomer in one tick: the server accepts both before it reads the call's head.
    const call = request(`${gw.adminUrl}/api/v1/sys/whoami`, { token, timeoutMs: 2_000 }).then((r) => r.status, (e: Error) => e.message);
    const newcomer = halfHead(gw.adminPort, '127.0.0.200');
    t.after(() => newcomer.socket.destroy());
    assert.equal(await call, 200, 'the call was answered');
    assert.equal(await idle[0]!.closed, 'end', 'the longest idle unauthenticated connection was closed');
    assert.match(idle[0]!.received, /HTTP\/1\.1 408 [^]*"code":"Svc\.Request\.Timeout"/);
    assert.ok(idle.slice(1).every((c) => !c.socket.destroyed), 'the other idle connections stay');
    keepAlive.socket.write(`GET /api/v1/sys/whoami HTTP/1.1\r\nHost: admin\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    assert.equal((await keepAlive.answer())?.status, 200, 'the operator’s authenticated keep-alive connection, idle longest, was kept');
  });
});
