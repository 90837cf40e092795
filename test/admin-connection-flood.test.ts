import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { sleep, waitFor } from './helpers/wait.js';
import { openDescriptors as fdCount } from './helpers/proc.js';

/**
 * Clients that open admin connections and never read or finish them: the supervisor
 * runs under a 1,024-descriptor limit, 1,100 such clients come from one address, and
 * the operator's calls from another address keep working; once the head timeout has
 * answered them 408, the supervisor's descriptors are back where they started.
 */

const FLOOD = 1_100;
const ATTACKER = '127.0.0.2';

/** A connection that never reads: paused before it connects, so not even the server's FIN is taken in. */
function silentClient(port: number, partialHead: boolean): Socket {
  const s = connect({ host: '127.0.0.1', port, localAddress: ATTACKER, allowHalfOpen: true });
  s.pause();
  s.on('error', () => {});
  if (partialHead) s.write('GET /api/v1/sys/whoami HTTP/1.1\r\nHost: admin\r\n');
  return s;
}

test('1,100 clients that never read cannot lock the operator out, and their descriptors are freed after the 408', { timeout: 60_000 }, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const token = gw.tokens.root!;
  const status = await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token });
  const pid: number = status.json.supervisor.pid;
  assert.equal(pid, gw.pid, 'the supervisor is the process the test started');
  execFileSync('prlimit', ['--nofile=1024:1024', '--pid', String(pid)]);

  const whoami = () => request(`${gw.adminUrl}/api/v1/sys/whoami`, { token, timeoutMs: 3_000 }).then((r) => r.status, (e: Error) => e.message);
  assert.equal(await whoami(), 200);
  await sleep(200);
  const baseline = fdCount(pid);

  // The operator calls throughout, one at a time, from 127.0.0.1.
  const answers: (number | string)[] = [];
  let operating = true;
  const operator = (async () => {
    while (operating) {
      answers.push(await whoami());
      await sleep(100);
    }
  })();

  // Four readers first (they get in under the cap): they show when the 408s go out.
  const sentinels = Array.from({ length: 4 }, () => {
    const s = connect({ host: '127.0.0.1', port: gw.adminPort, localAddress: ATTACKER });
    s.on('error', () => {});
    return { socket: s, answer: new Promise<{ at: number; text: string }>((resolve) => {
      let text = '';
      s.setEncoding('latin1').on('data', (d: string) => (text += d)).on('close', () => resolve({ at: Date.now(), text }));
    }) };
  });
  await Promise.all(sentinels.map((s) => new Promise((r) => s.socket.once('connect', r))));
  const silent: Socket[] = [];
  t.after(() => {
    operating = false;
    for (const s of silent) s.destroy();
    for (const s of sentinels) s.socket.destroy();
  });
  const floodFrom = Date.now();
  for (let i = 0; i < FLOOD - sentinels.length; i++) silent.push(silentClient(gw.adminPort, i % 2 === 0));
  await waitFor('every flood connection to connect', () => silent.every((s) => !s.connecting) || undefined, { timeoutMs: 10_000 });
  const rampMs = Date.now() - floodFrom;
  const peakDuringFlood = await (async () => {
    let peak = 0;
    for (let i = 0; i < 10; i++) {
      peak = Math.max(peak, fdCount(pid));
      await sleep(100);
    }
    return peak;
  })();
  assert.ok(peakDuringFlood <= baseline + 64 + 16, `held descriptors stay near the per-address cap: baseline ${baseline}, peak ${peakDuringFlood}`);

  const first408 = await Promise.race(sentinels.map((s) => s.answer));
  assert.match(first408.text, /^HTTP\/1\.1 408 /, first408.text);
  assert.match(first408.text, /"code":"Svc\.Request\.Timeout"/);
  const freedAt = await waitFor('the supervisor descriptors back at baseline', () => (fdCount(pid) <= baseline + 2 ? Date.now() : undefined), { timeoutMs: 5_000, intervalMs: 50 });
  // The flood's heads time out as its connections were made (over rampMs), seen by node:http's
  // connections check every 1 s; each refused socket then lingers at most 1 s.
  const bound = rampMs + 2_000 + 250;
  t.diagnostic(`descriptors freed ${freedAt - first408.at} ms after the first 408; the flood connected over ${rampMs} ms`);
  assert.ok(freedAt - first408.at <= bound, `descriptors back at baseline ${freedAt - first408.at} ms after the first 408, bound ${bound} ms (flood connected over ${rampMs} ms; baseline ${baseline}, now ${fdCount(pid)})`);

  operating = false;
  await operator;
  const failed = answers.filter((a) => a !== 200);
  assert.ok(answers.length >= 20, `the operator kept calling: ${answers.length} calls`);
  assert.deepEqual(failed, [], `every operator call succeeded (${answers.length} calls)`);
});

test('a connection over admin.maxConnectionsPerAddress is answered 429 Svc.Request.TooManyConnections and closed; other addresses are unaffected', { timeout: 30_000 }, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: (c) => void (c.admin.maxConnectionsPerAddress = 3) });
  const held: Socket[] = [];
  t.after(() => held.forEach((s) => s.destroy()));
  for (let i = 0; i < 3; i++) {
    const s = connect({ host: '127.0.0.1', port: gw.adminPort, localAddress: ATTACKER });
    s.on('error', () => {});
    held.push(s);
    await new Promise((r) => s.once('connect', r));
  }
  await sleep(100); // the server has counted them
  const fourth = connect({ host: '127.0.0.1', port: gw.adminPort, localAddress: ATTACKER });
  held.push(fourth);
  fourth.on('error', () => {});
  const text = await new Promise<string>((resolve) => {
    let out = '';
    fourth.setEncoding('latin1').on('data', (d: string) => (out += d)).on('close', () => resolve(out));
  });
  assert.match(text, /^HTTP\/1\.1 429 /, text);
  assert.match(text, /"code":"Svc\.Request\.TooManyConnections"/);
  assert.match(text, /connection: close/i);
  assert.equal((await request(`${gw.adminUrl}/api/v1/sys/whoami`, { token: gw.tokens.root! })).status, 200, 'another address still gets in');
  held[0]!.destroy();
  await waitFor('a freed slot to take a new connection from the capped address', async () => {
    const r = await request(`${gw.adminUrl}/api/v1/sys/whoami`, { token: gw.tokens.root!, localAddress: ATTACKER }).catch(() => null);
    return r?.status === 200 || undefined;
  });
});
