import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { once } from 'node:events';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startGateway, ROOT, type Gateway } from './helpers/gateway.js';
import { startUpstream, patternSha256, type Upstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, clusterStatus } from './helpers/admin.js';
import { issue, makePki, type Pki } from './helpers/certs.js';
import { freePort } from './helpers/ports.js';
import { MiB, rssBytes, sampleRss } from './helpers/proc.js';
import { BOUNDED, isRunning, sleep, waitFor } from './helpers/wait.js';
import { h2Request, latencies, openSession, percentile } from './helpers/h2-client.js';
import { startEchoUpstream, serveH2Specials, trickleBytes } from './helpers/h2-upstreams.js';

const NAME = 'h2.test';
const curlOut = async (args: string[]): Promise<string> => (await promisify(execFile)('curl', ['-sS', '-m', '20', ...args], { encoding: 'utf8' })).stdout;

interface TlsGateway {
  gw: Gateway;
  up: Upstream;
  pki: Pki;
  tlsPort: number;
  /** The worker's pid (one worker). */
  worker: number;
  /** A session to the TLS port, over ALPN h2. */
  session(t: Pick<TestContext, 'after'>): Promise<ClientHttp2Session>;
  curlArgs: string[];
  url(path: string): string;
}

/** A node-engine gateway with a TLS port (h2, http/1.1), one worker, serving NAME: `/echo` echoes the body, the rest goes to `up`. */
async function tlsGateway(t: Pick<TestContext, 'after'>, drainGraceMs?: number): Promise<TlsGateway> {
  const pki = makePki(t);
  const up = await startUpstream(t as TestContext);
  serveH2Specials(up);
  const echo = await startEchoUpstream(t);
  const tlsPort = await freePort();
  const gw = await startGateway(t as TestContext, {
    engine: 'node',
    keys: [ROOT_KEY],
    ...(drainGraceMs !== undefined ? { drainGraceMs } : {}),
    edit: (c) => {
      (c.listen as Record<string, unknown>).tls = { port: tlsPort };
    },
  });
  await apply(gw, [
    ['cert', 'site', issue(pki, [NAME])],
    ['cluster', 'c', { targets: [up.target] }],
    ['cluster', 'e', { targets: [echo.target] }],
    ['route', 'echo', { cluster: 'e', pathPrefix: '/echo' }],
    ['route', 'all', { cluster: 'c', pathPrefix: '/t' }],
  ]);
  const worker = (await clusterStatus(gw)).workers[0]!.pid!;
  return {
    gw,
    up,
    pki,
    tlsPort,
    worker,
    session: (tt) => openSession(tt, `https://127.0.0.1:${tlsPort}`, { ca: pki.ca, servername: NAME }),
    curlArgs: ['--cacert', join(pki.dir, 'ca.pem'), '--resolve', `${NAME}:${tlsPort}:127.0.0.1`],
    url: (path) => `https://${NAME}:${tlsPort}${path}`,
  };
}

// One gateway for the tests that neither stop it nor change its configuration.
const cleanups: (() => unknown)[] = [];
const suite = { after: (fn: () => unknown) => void cleanups.push(fn) };
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
});
let sharedGateway: Promise<TlsGateway> | null = null;
const shared = (): Promise<TlsGateway> => (sharedGateway ??= tlsGateway(suite));

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

test('TLS: curl and node:http2 get h2 by ALPN, curl --http1.1 gets HTTP/1.1 on the same port; 1 MiB goes up and comes back byte for byte; hop-by-hop lines from the upstream are dropped', BOUNDED, async (t) => {
  const g = await shared();
  const curlArgs = [...g.curlArgs, '-o', '/dev/null', '-w', '%{http_version} %{http_code}'];
  assert.match(await curlOut(['--version']), /^Features:.*\bHTTP2\b/m, 'this curl speaks HTTP/2');
  assert.equal(await curlOut([...curlArgs, '--http2', g.url('/t/a')]), '2 200');
  assert.equal(await curlOut([...curlArgs, '--http1.1', g.url('/t/a')]), '1.1 200');

  const session = await g.session(t);
  assert.equal(session.alpnProtocol, 'h2');
  const body = randomBytes(MiB);
  // With a Content-Length, and without one (h2 has no chunked coding: the body is what DATA frames carry until END_STREAM).
  for (const length of [{ 'content-length': String(MiB) }, {}]) {
    const echoed = await h2Request(session, '/echo/up', { method: 'POST', body, headers: { 'content-type': 'application/octet-stream', ...length } });
    assert.equal(echoed.status, 200);
    assert.equal(echoed.body.length, body.length, `the body came back whole ${length['content-length'] ? 'with' : 'without'} a Content-Length`);
    assert.ok(echoed.body.equals(body), 'the answer is the body sent, byte for byte');
  }

  // The upstream answers with Connection, Keep-Alive, Transfer-Encoding, Proxy-Connection, Upgrade in mixed case.
  const hop = await h2Request(session, '/t/hop');
  assert.equal(hop.status, 200);
  assert.equal(hop.body.toString(), 'hop body');
  for (const name of ['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade']) assert.equal(hop.headers[name], undefined, name);
  assert.equal(hop.headers['x-upper-case'], 'Yes', 'an end-to-end line with an upper-case name arrives, its name lower-cased');
  // curl refuses an h2 answer carrying a connection-specific line: a 200 proves there was none.
  assert.equal(await curlOut([...curlArgs, '--http2', g.url('/t/hop')]), '2 200');
  const again = await h2Request(session, '/t/after-hop');
  assert.equal(again.status, 200, 'the session still serves');
});

// Regression: the gateway routed on Host while :authority named another host (RFC 9113 §8.3.1: malformed).
test('h2: a Host beside a different :authority is refused 400; a Host equal to :authority is served', BOUNDED, async (t) => {
  const g = await shared();
  const session = await g.session(t);
  const same = await h2Request(session, '/t/same-host', { headers: { ':authority': NAME, host: NAME } });
  assert.equal(same.status, 200, 'Host equal to :authority');
  const other = await h2Request(session, '/t/other-host', { headers: { ':authority': NAME, host: 'elsewhere.test' } });
  assert.equal(other.status, 400, other.body.toString());
  assert.equal(JSON.parse(other.body.toString()).code, 'Svc.Data.BadRequest');
});

// Regressions: the h2 header list bound was advertised, never applied; node dropped HTTP/1.1
// fields past its count silently; an odd Expect got node's own bare 417.
test('head bounds on the node engine: an h2 header list over h2MaxHeaderListBytes gets 431 HeadTooLarge; 1,100 HTTP/1.1 fields all reach the upstream; Expect: foo is routed', BOUNDED, async (t) => {
  const g = await shared();
  const session = await g.session(t);
  const small = await h2Request(session, '/t/list-small', { headers: { 'x-pad': 'a'.repeat(12_000) } });
  assert.equal(small.status, 200, 'a 12 KB list is under the 32 KiB default, and the upstream takes it');
  // Sent before the server's SETTINGS are read: node's client would itself refuse a list over the peer's advertised bound.
  const eager = connect(`https://127.0.0.1:${g.tlsPort}`, { ca: g.pki.ca, servername: NAME });
  t.after(() => eager.destroy());
  eager.on('error', () => {});
  const big = await h2Request(eager, '/t/list-big', { headers: { 'x-pad': 'a'.repeat(40_000) } });
  assert.equal(big.status, 431, big.body.toString());
  assert.equal(JSON.parse(big.body.toString()).code, 'Svc.Data.HeadTooLarge');
  assert.ok(!g.up.requests.some((r) => r.url === '/t/list-big'), 'the refused request reached no upstream');

  const headers: Record<string, string> = { expect: 'foo' };
  for (let i = 0; i < 1_100; i++) headers[`x-f${i}`] = String(i);
  headers['x-last'] = 'here';
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port: g.tlsPort, servername: NAME, ca: g.pki.ca, path: '/t/many', headers, ALPNProtocols: ['http/1.1'] }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
  assert.equal(status, 200, 'routed, Expect: foo included');
  const seen = g.up.requests.find((r) => r.url === '/t/many');
  assert.ok(seen, 'the request with 1,100 fields reached the upstream');
  assert.equal(seen.headers['x-last'], 'here', `the field after the first thousand reached the upstream (${Object.keys(seen.headers).length} fields did, the last ${Object.keys(seen.headers).at(-1)})`);
  assert.equal(seen.headers['x-f1099'], '1099');
});

test('1,000 concurrent streams on 10 connections: every answer right, the worker\'s RSS bounded', BOUNDED, async (t) => {
  const g = await shared();
  const sessions = await Promise.all(range(10).map(() => g.session(t)));
  // Warm the worker up, so its baseline holds what any traffic allocates once.
  await Promise.all(sessions.map((s) => h2Request(s, '/t/warm')));
  let inFlight = 0;
  let peakInFlight = 0;
  g.up.handler = (_req, res) => {
    peakInFlight = Math.max(peakInFlight, ++inFlight);
    res.once('close', () => inFlight--);
    return false;
  };
  t.after(() => serveH2Specials(g.up));
  const before = rssBytes(g.worker);
  const sampler = sampleRss([g.worker]);
  const t0 = performance.now();
  const answers = await Promise.all(
    sessions.flatMap((s, c) =>
      range(100).map(async (i) => {
        const path = `/t/many/${c}/${i}`;
        return { path, r: await h2Request(s, path, { headers: { 'x-up-delay-ms': '300' }, timeoutMs: 60_000 }) };
      }),
    ),
  );
  const ms = Math.round(performance.now() - t0);
  const { peak } = sampler.stop();
  let right = 0;
  for (const { path, r } of answers) if (r.status === 200 && (JSON.parse(r.body.toString()) as { url: string }).url === path) right++;
  const growth = (peak - before) / MiB;
  t.diagnostic(`${right}/1000 right in ${ms} ms; upstream saw at most ${peakInFlight} at once; worker RSS ${(before / MiB).toFixed(1)} MiB -> peak ${(peak / MiB).toFixed(1)} MiB (+${growth.toFixed(1)} MiB)`);
  assert.equal(right, 1000);
  assert.ok(growth < 150, `RSS grew ${growth.toFixed(1)} MiB`);
});

interface FloodRound {
  started?: true;
  done?: true;
  cpuMs?: number;
  streams: number;
  goaway: number | null;
  closed: boolean;
  handshaken: boolean;
  ms: number;
}

/** The flooding client's own address: the well-behaved ones come from 127.0.0.1. */
const ATTACKER = '127.0.0.2';

/** Runs the rapid-reset client (its own process) against `g`; `probe` measures a well-behaved client's latencies while it runs. */
/** `port`: where the flood goes (a port nobody listens on: the same client's load on the machine, without a gateway to hit). */
async function flood(t: TestContext, g: TlsGateway, durationMs: number, probe: ClientHttp2Session, port = g.tlsPort): Promise<{ rounds: FloodRound[]; during: number[]; cpuMs: number }> {
  const plan = { port, servername: NAME, ca: g.pki.ca, path: '/t/flood', durationMs, maxStreams: 10_000, localAddress: ATTACKER };
  // On its own CPU (the last), away from the worker and the probe (pinned to the first by the test).
  const child = spawn('taskset', ['-c', String(cpus().length - 1), process.execPath, '--import', 'tsx', join(ROOT, 'test/helpers/rapid-reset-flood.ts'), JSON.stringify(plan)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  let exit: number | null | undefined;
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r((exit = code))));
  await waitFor('the flood to start', () => out.includes('"started"') || exit !== undefined, { timeoutMs: 15_000 });
  const during = await latencies(probe, '/t/probe', 30_000, () => exit !== undefined);
  assert.equal(await exited, 0);
  const lines = out.trim().split('\n').map((l) => JSON.parse(l) as FloodRound);
  const rounds = lines.filter((r) => !r.started && !r.done);
  return { rounds, during, cpuMs: lines.find((r) => r.done)?.cpuMs ?? 0 };
}

const ms = (v: number): string => v.toFixed(2);

/** Pins a process (and its threads) to `cpuList` (taskset's syntax: "0", "0-1"). */
const pin = (pid: number, cpuList: string): void => void execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(pid)], { stdio: 'ignore' });

/** One HTTP/1.1 connection over TLS (ALPN http/1.1), kept alive: `get` sends a request on it and reads its whole answer ('' when the connection was cut). */
async function tlsH1(g: TlsGateway): Promise<{ socket: TLSSocket; get(path: string): Promise<string> }> {
  const socket = tlsConnect({ host: '127.0.0.1', port: g.tlsPort, servername: NAME, ca: g.pki.ca, ALPNProtocols: ['http/1.1'] });
  await once(socket, 'secureConnect');
  let inbox = '';
  let waiter: (() => void) | null = null;
  socket.setEncoding('latin1').on('data', (d: string) => ((inbox += d), waiter?.()));
  socket.on('close', () => waiter?.());
  socket.on('error', () => {});
  const complete = (): boolean => {
    const end = inbox.indexOf('\r\n\r\n');
    const length = /\r\ncontent-length: (\d+)/i.exec(inbox);
    return end !== -1 && length !== null && inbox.length >= end + 4 + Number(length[1]);
  };
  return {
    socket,
    get: (path) =>
      new Promise((resolve) => {
        inbox = '';
        if (socket.destroyed) return resolve('');
        waiter = () => {
          if (!complete() && !socket.destroyed && socket.readable) return;
          waiter = null;
          resolve(inbox);
        };
        socket.write(`GET ${path} HTTP/1.1\r\nHost: ${NAME}\r\n\r\n`);
      }),
  };
}

/** A process's CPU time (user + system) in ms, from /proc. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

test('rapid reset: 10,000 HEADERS+RST_STREAM: the first connection gets GOAWAY ENHANCE_YOUR_CALM long before, its address cannot connect again for the cooldown, none reaches the upstream; a well-behaved client\'s p50 and p99 within 20 % of its own without the flood', { timeout: 120_000 }, async (t) => {
  const g = await shared();
  const probe = await g.session(t);
  await latencies(probe, '/t/probe', 500); // warm-up
  const flooded = (): number => g.up.requests.filter((q) => q.url === '/t/flood').length;
  // The worker and this process (the probe, the upstream) share the first CPU, the flooder has
  // the last to itself: what the flood adds to the probe's latency is then the gateway's work.
  const all = `0-${cpus().length - 1}`;
  pin(g.worker, '0');
  pin(process.pid, '0');
  t.after(() => (pin(process.pid, all), isRunning(g.worker) && pin(g.worker, all)));
  const quiet = await latencies(probe, '/t/probe', 3_000);
  t.diagnostic(`quiet (no flooder): probe p50 ${ms(percentile(quiet, 50))} ms, p99 ${ms(percentile(quiet, 99))} ms (${quiet.length} requests)`);

  // The control, reported: the same flooding process, for the same time, aimed at a port nobody listens on.
  const control = await flood(t, g, 3_000, probe, await freePort());
  const [ctl50, ctl99] = [percentile(control.during, 50), percentile(control.during, 99)];
  t.diagnostic(`control (the flooder aimed at a closed port): ${control.rounds.length} connection attempts, the flooder ${control.cpuMs} ms of CPU; probe p50 ${ms(ctl50)} ms, p99 ${ms(ctl99)} ms (${control.during.length} requests)`);

  // The flood: up to 10,000 streams for at most 3 s, reconnecting at once whenever cut.
  const cpu0 = cpuMs(g.worker);
  const w0 = performance.now();
  const run = await flood(t, g, 3_000, probe);
  const workerCpu = (100 * (cpuMs(g.worker) - cpu0)) / (performance.now() - w0);
  const [first, ...rest] = run.rounds;
  const [flood50, flood99] = [percentile(run.during, 50), percentile(run.during, 99)];
  const handshaken = rest.filter((x) => x.handshaken).length;
  t.diagnostic(`flood: the first connection ${first!.streams} streams (HEADERS + RST_STREAM) in ${first!.ms} ms, then GOAWAY ${first!.goaway}; then ${rest.length} reconnections, ${handshaken} handshaken; the flooder ${run.cpuMs} ms of CPU; ${flooded()} streams reached the upstream; worker CPU ${workerCpu.toFixed(0)} % of a core; probe p50 ${ms(flood50)} ms, p99 ${ms(flood99)} ms (${run.during.length} requests); load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`);
  assert.equal(first!.goaway, constants.NGHTTP2_ENHANCE_YOUR_CALM);
  assert.ok(first!.streams <= 1_000, `${first!.streams} streams before GOAWAY`);
  assert.ok(flooded() <= first!.streams / 4, `${flooded()} of ${first!.streams} streams reset at once were forwarded upstream`);
  assert.ok(rest.length > 0, 'the flooder reconnected');
  assert.equal(handshaken, 0, 'a connection from the flooding address got a TLS handshake during its cooldown');
  // A new connection from another address is served meanwhile.
  const fresh = await g.session(t);
  assert.equal((await h2Request(fresh, '/t/probe')).status, 200, 'a new client on another address was refused');
  assert.ok(workerCpu < 80, `the worker spent ${workerCpu.toFixed(0)} % of a core during the flood`);
  // Against the same probe with no flooder: +20 %, and 0.5 ms for the timer and scheduler grain
  // of a shared VM. (The control is reported, not held: on this kind of VM a busy second CPU
  // alone lowered the probe's p99 from about 3.6 ms to 0.7 ms, measured.)
  const [q50, q99] = [percentile(quiet, 50), percentile(quiet, 99)];
  assert.ok(flood50 <= q50 * 1.2 + 0.5, `p50 ${ms(flood50)} ms during the flood against ${ms(q50)} ms without it`);
  assert.ok(flood99 <= q99 * 1.2 + 0.5, `p99 ${ms(flood99)} ms during the flood against ${ms(q99)} ms without it`);
  assert.equal((await h2Request(probe, '/t/probe')).status, 200, 'the well-behaved session was never closed');
});

test('a slow h2 reader of 50 MiB: flow control holds the upstream back, the worker\'s RSS stays within 20 MB', BOUNDED, async (t) => {
  const g = await shared();
  const session = await g.session(t);
  const size = 50 * MiB;
  // One download read at full speed first: the worker's heap grows once to what relaying takes (about 45 MB, measured), whoever reads.
  const warm = await h2Request(session, '/t/warm-big', { headers: { 'x-up-stream-bytes': String(size) }, timeoutMs: 30_000 });
  assert.equal(warm.body.length, size);
  const before = rssBytes(g.worker);
  const sampler = sampleRss([g.worker]);
  const stream = session.request({ ':path': '/t/big', 'x-up-stream-bytes': String(size) });
  stream.pause();
  await new Promise((r) => stream.once('response', r));
  const rec = await waitFor('the upstream request', () => g.up.requests.find((r) => r.url === '/t/big'));
  // Not read at all for 3 s: what the upstream wrote is bounded by the windows and socket buffers on the way.
  await sleep(3_000);
  const aheadWhilePaused = rec.sentBytes;
  // Then read slowly: 1 MiB, a 100 ms pause, and so on.
  const hash = createHash('sha256');
  let got = 0;
  let maxAhead = 0;
  await new Promise<void>((resolve, reject) => {
    let nextPause = MiB;
    stream.on('data', (c: Buffer) => {
      hash.update(c);
      got += c.length;
      maxAhead = Math.max(maxAhead, rec.sentBytes - got);
      if (got >= nextPause) {
        nextPause += MiB;
        stream.pause();
        setTimeout(() => stream.resume(), 100);
      }
    });
    stream.once('end', resolve);
    stream.once('error', reject);
    stream.resume();
  });
  const { peak } = sampler.stop();
  const growth = (peak - before) / MiB;
  t.diagnostic(`upstream ahead while unread ${(aheadWhilePaused / MiB).toFixed(2)} MiB, at most ${(maxAhead / MiB).toFixed(2)} MiB ahead while read slowly; worker RSS ${(before / MiB).toFixed(1)} MiB -> peak ${(peak / MiB).toFixed(1)} MiB (+${growth.toFixed(1)} MiB)`);
  assert.equal(got, size);
  assert.equal(hash.digest('hex'), patternSha256(size));
  assert.ok(aheadWhilePaused < 8 * MiB, `the upstream wrote ${aheadWhilePaused} bytes to a reader that took none`);
  assert.ok(growth < 20, `RSS grew ${growth.toFixed(1)} MiB`);
});

test('h2c with prior knowledge: 3 sequential and 20 concurrent requests on one session; HTTP/1.1 on the same port', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, { engine: 'node', keys: [ROOT_KEY], edit: (c) => void ((c.listen as Record<string, unknown>).h2c = true) });
  await apply(gw, [['cluster', 'c', { targets: [up.target] }], ['route', 'all', { cluster: 'c' }]]);
  const session = await openSession(t, `http://127.0.0.1:${gw.dataPort}`);
  const urlOf = (body: Buffer): string => (JSON.parse(body.toString()) as { url: string }).url;
  for (const i of range(3)) {
    const r = await h2Request(session, `/seq/${i}`, { timeoutMs: 5_000 });
    assert.deepEqual([r.status, urlOf(r.body)], [200, `/seq/${i}`]);
  }
  const many = await Promise.all(range(20).map((i) => h2Request(session, `/par/${i}`, { timeoutMs: 5_000 })));
  assert.deepEqual(many.map((r) => [r.status, urlOf(r.body)]), range(20).map((i) => [200, `/par/${i}`]));
  assert.equal(up.requests.length, 23);
  assert.equal(await curlOut(['--http1.1', '-o', '/dev/null', '-w', '%{http_version} %{http_code}', `http://127.0.0.1:${gw.dataPort}/h1`]), '1.1 200');
  assert.equal(await curlOut(['--http2-prior-knowledge', '-o', '/dev/null', '-w', '%{http_version} %{http_code}', `http://127.0.0.1:${gw.dataPort}/h2`]), '2 200');
});

test('a client that resets its h2 stream mid-answer is noticed: the upstream request is aborted at once', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  let upstreamClosedEarly: (() => void) | null = null;
  const closedEarly = new Promise<void>((r) => (upstreamClosedEarly = r));
  up.handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => res.write('x'.repeat(64)), 50);
    res.on('close', () => {
      clearInterval(timer);
      if (!res.writableEnded) upstreamClosedEarly!();
    });
    return true;
  };
  const gw = await startGateway(t, { engine: 'node', keys: [ROOT_KEY], edit: (c) => void ((c.listen as Record<string, unknown>).h2c = true) });
  await apply(gw, [['cluster', 'c', { targets: [up.target] }], ['route', 'all', { cluster: 'c' }]]);
  const session = await openSession(t, `http://127.0.0.1:${gw.dataPort}`);
  const s = session.request({ ':path': '/endless' });
  s.on('error', () => {});
  await once(s, 'data');
  const resetAt = performance.now();
  s.close(constants.NGHTTP2_CANCEL);
  // Node 20's compatibility response said 'finish' before 'close' on a reset: the abort was missed and the upstream answer ran on.
  await closedEarly;
  assert.ok(performance.now() - resetAt < 2_000, 'the upstream request was aborted right after the reset');
});

test('publish and drain over h2: 50 trickling answers survive a publish; the new route answers on the same session; SIGTERM sends GOAWAY NO_ERROR, the 50 finish within drain.graceMs, new streams are refused', BOUNDED, async (t) => {
  const graceMs = 10_000;
  const g = await tlsGateway(t, graceMs);
  const session = await g.session(t);
  const chunks = 40;
  const intervalMs = 100;
  let firstChunks = 0;
  const streams = range(50).map((i) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const s = session.request({ ':path': `/t/trickle?n=${chunks}&ms=${intervalMs}&id=${i}` });
      let status = 0;
      let body = '';
      s.on('response', (h) => (status = Number(h[':status'])));
      s.setEncoding('utf8');
      s.on('data', (d: string) => {
        if (body === '') firstChunks++;
        body += d;
      });
      s.on('error', () => {}); // told by 'close'
      s.on('close', () => {
        if (s.readableEnded && s.rstCode === constants.NGHTTP2_NO_ERROR) resolve({ status, body });
        else reject(new Error(`stream ${i} closed with code ${s.rstCode} after ${body.length} bytes`));
      });
    }),
  );
  await waitFor('a first chunk on each of the 50 streams', () => firstChunks === 50, { timeoutMs: 10_000 });
  assert.equal((await h2Request(session, '/new/x')).status, 404, 'no route yet');
  await apply(g.gw, [['route', 'new', { pathPrefix: '/new', directResponse: { statusCode: 200, body: 'new route' } }]]);
  const fresh = await h2Request(session, '/new/x');
  assert.deepEqual([fresh.status, fresh.body.toString()], [200, 'new route'], 'the new route answers on the same session');

  // An idle kept-alive HTTP/1.1 connection on the same TLS port: the drain answers its next request, asking it to close, instead of cutting it.
  const h1 = await tlsH1(g);
  t.after(() => h1.socket.destroy());
  assert.match(await h1.get('/new/x'), /^HTTP\/1\.1 200 /);

  const goaway = new Promise<{ code: number; lastStreamID: number }>((r) => session.once('goaway', (code, lastStreamID) => r({ code, lastStreamID })));
  const t0 = Date.now();
  const stopped = g.gw.stop('SIGTERM', graceMs + 5_000);
  const ga = await goaway;
  assert.equal(ga.code, constants.NGHTTP2_NO_ERROR);
  const afterDrain = await h1.get('/new/x');
  assert.match(afterDrain, /^HTTP\/1\.1 200 [^]*\r\nconnection: close\r\n/i, `the kept-alive TLS connection during the drain: ${JSON.stringify(afterDrain.slice(0, 300))}`);
  assert.throws(() => session.request({ ':path': '/t/late' }), { code: 'ERR_HTTP2_GOAWAY_SESSION' });
  await assert.rejects(g.session(t), 'a new connection is refused');

  const done = await Promise.all(streams);
  const finishedMs = Date.now() - t0;
  const expected = trickleBytes(chunks);
  assert.deepEqual(done.map((d) => [d.status, d.body.length]), range(50).map(() => [200, expected]), 'none dropped or cut');
  const exit = await stopped;
  t.diagnostic(`GOAWAY last stream ${ga.lastStreamID}; the 50 streams finished ${finishedMs} ms after SIGTERM; the gateway exited after ${exit.ms} ms`);
  assert.ok(finishedMs < graceMs);
  assert.deepEqual([exit.code, exit.timedOut], [0, false]);
  assert.ok(exit.ms < graceMs, `exit after ${exit.ms} ms`);
});
