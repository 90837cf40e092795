import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { sleep, waitFor } from './helpers/wait.js';
import { openDescriptors } from './helpers/proc.js';

/**
 * A slowloris flood from many addresses against the admin port: the supervisor runs under
 * a 1,024-descriptor limit; 1,100 clients spread over 100 loopback addresses (11 each,
 * under the per-address cap) send half a head, never read, add a header line every
 * 500 ms and reconnect as soon as a write tells them they were closed, for 30 s. The
 * operator calls whoami from 127.0.0.1 every 100 ms with a 2 s client timeout.
 */

const CLIENTS = 1_100;
const ADDRESSES = 100;
const FLOOD_MS = 30_000;
const TRICKLE_MS = 500;
const OPERATOR_TIMEOUT_MS = 2_000;

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

test('1,100 slowloris clients from 100 addresses that keep reconnecting: the operator keeps at least 90 % of its calls, all once they stop, and the descriptors come back', { timeout: 90_000 }, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const token = gw.tokens.root!;
  const pid = gw.pid;
  execFileSync('prlimit', ['--nofile=1024:1024', '--pid', String(pid)]);
  const whoami = () => request(`${gw.adminUrl}/api/v1/sys/whoami`, { token, timeoutMs: OPERATOR_TIMEOUT_MS }).then((r) => r.status, (e: Error) => e.message);
  assert.equal(await whoami(), 200);
  await sleep(200);
  const baseline = openDescriptors(pid);

  let flooding = true;
  const counts = { connects: 0 };
  const stops: (() => void)[] = [];
  t.after(() => {
    flooding = false;
    stops.forEach((stop) => stop());
  });
  for (let i = 0; i < CLIENTS; i++) stops.push(slowlorisSlot(gw.adminPort, `127.0.0.${2 + (i % ADDRESSES)}`, () => flooding, counts));

  // The operator: one call at a time, one started every ~100 ms, during the flood and 3 s after it.
  const during: (number | string)[] = [];
  const after: (number | string)[] = [];
  let peak = 0;
  let operating = true;
  const operator = (async () => {
    while (operating) {
      const into = flooding ? during : after;
      const started = Date.now();
      into.push(await whoami());
      peak = Math.max(peak, openDescriptors(pid));
      await sleep(Math.max(0, 100 - (Date.now() - started)));
    }
  })();

  await sleep(FLOOD_MS);
  flooding = false;
  stops.forEach((stop) => stop());
  const floodConnects = counts.connects;
  await sleep(3_000);
  operating = false;
  await operator;

  const ok = during.filter((a) => a === 200).length;
  const ratio = ok / during.length;
  const failures = [...new Set(during.filter((a) => a !== 200))].slice(0, 5);
  t.diagnostic(`operator calls during the flood: ${ok}/${during.length} answered 200 (${(ratio * 100).toFixed(1)} %); after it: ${after.filter((a) => a === 200).length}/${after.length}`);
  t.diagnostic(`flood connections made: ${floodConnects}; supervisor descriptors: baseline ${baseline}, peak ${peak} (limit 1024)`);
  // The flood pressed on the cap: far more connections than the limit, and the supervisor filled up to near it.
  assert.ok(floodConnects > 2 * CLIENTS, `the clients kept reconnecting: ${floodConnects} connections`);
  assert.ok(peak > 512, `the flood held hundreds of the supervisor's descriptors: peak ${peak}`);
  assert.ok(peak < 1024, `the supervisor never reached its descriptor limit: peak ${peak}`);
  assert.ok(during.length >= 150, `the operator kept calling: ${during.length} calls in ${FLOOD_MS} ms`);
  assert.ok(ratio >= 0.9, `at least 90 % of the operator's calls succeed during the flood: ${ok}/${during.length}; failures such as ${JSON.stringify(failures)}`);
  assert.ok(after.length >= 10, `the operator kept calling after the flood: ${after.length} calls`);
  assert.deepEqual(after.filter((a) => a !== 200), [], 'every call after the flood succeeds');

  await waitFor('the supervisor descriptors back near baseline', () => openDescriptors(pid) <= baseline + 4 || undefined, { timeoutMs: 5_000, intervalMs: 50 });
  const shed = gw.logLines().filter((l) => (l as { msg?: string }).msg === 'admin connections shed');
  assert.ok(shed.length > 0, 'the supervisor logged the connections it shed');
});
