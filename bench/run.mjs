// `npm run bench`: requests/s and p99 of the gateway against the upstream direct, a
// plain Node proxy baseline (fastify + @fastify/http-proxy) and a bare uWebSockets.js
// server, as ratios measured in one run on one machine (DESIGN.md §7).
//
// Every server runs in its own process on 127.0.0.1 with ports chosen at run time;
// the load generator (autocannon, in this process, or wrk when it is on PATH) drives
// one target at a time with the same load. Everything started here is stopped on
// exit, on errors and on SIGINT/SIGTERM.
//
// Environment:
//   BENCH_SECONDS  measured seconds per target and round (default 2); a warm-up precedes
//                  each (3 s in the first round, when the JIT is cold; 1 s after that)
//   BENCH_TOOL     autocannon | wrk (default: wrk when on PATH, else autocannon)
//   BENCH_ROUNDS   run every target this many times, report medians (default 10: ratios are
//                  medians of per-round pairs; rounds alternate direction, A B then B A)
//   BENCH_ONLY     comma-separated target keys to run (default: all); ratios whose two
//                  targets did not both run are left out
//   BENCH_PIN      1 | 0: pin the proxy under test to CPU 0 and the load generator and
//                  the upstream to CPU 1 with taskset (default 1 when taskset is on PATH
//                  and there are at least 2 CPUs)
//   BENCH_COMPARE  path of another checkout with dist/ built: its gateway runs too, as the
//                  targets compareCluster and compareSteps, in the same rounds (an A/B)
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuTicks, stealPercent, treeCpuMs } from './process-cpu.mjs';
import { FIVE_STEPS, STEPS_REQUEST_HEADERS } from './five-step-route.mjs';
import { request } from 'undici';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(HERE);
const HOST = '127.0.0.1';
const CONNECTIONS = 50;
const PIPELINING = 1;
const WARMUP_FIRST_SECONDS = 3;
const WARMUP_SECONDS = 1;
const SECONDS = positiveInt(process.env.BENCH_SECONDS, 2);
const ROUNDS = positiveInt(process.env.BENCH_ROUNDS, 10);
const TOOL = chooseTool(process.env.BENCH_TOOL);
const PIN = choosePin(process.env.BENCH_PIN);
const COMPARE = process.env.BENCH_COMPARE || null;
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((k) => k.trim())) : null;
// With pinning: the server under test gets CPU 0 to itself; the load generator and the
// upstream share CPU 1, so they never steal cycles from the process being measured.
const CPU_SERVER = '0';
const REQUEST_HEADERS = STEPS_REQUEST_HEADERS;
const CPU_LOAD = '1';

// Acceptance item 9 of issue 3.
const TARGETS = { clusterVsBaseline: 3, directVsBareUws: 0.8, fiveStepsVsCluster: 0.85 };

// ---------------------------------------------------------------------------
// Child processes: tracked here, all stopped on the way out.

const children = new Set();
const tmps = [];
let signalled = false;

/** The command line, under `taskset -c <cpu>` when pinning is on. */
function pinned(cpu, cmd, args) {
  return PIN && cpu !== undefined ? ['taskset', ['-c', cpu, cmd, ...args]] : [cmd, args];
}

function startChild(name, args, { env, cwd, cpu, ready = /^ready port=(\d+)$/m, timeoutMs = 20_000 } = {}) {
  const child = spawn(...pinned(cpu, process.execPath, args), {
    cwd: cwd ?? ROOT,
    env: { ...process.env, ...env },
    // Our servers (and guard.mjs around the gateway) exit when their stdin closes,
    // i.e. when this process dies, however it died.
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  child.on('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`${name}: not ready after ${timeoutMs} ms`)), timeoutMs);
    const fail = (err) => {
      clearTimeout(timer);
      reject(new Error(`${err.message}\n--- ${name} stderr ---\n${stderr}`));
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    });
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`${name}: exited early (code ${code}, signal ${signal})`)));
  });
}

async function stopAll() {
  const waiting = [...children].map(
    (c) =>
      new Promise((resolve) => {
        if (c.exitCode !== null || c.signalCode !== null) return resolve();
        const hard = setTimeout(() => c.kill('SIGKILL'), 15_000);
        c.once('exit', () => {
          clearTimeout(hard);
          resolve();
        });
        c.kill('SIGTERM');
      }),
  );
  await Promise.all(waiting);
  for (const t of tmps.splice(0)) rmSync(t, { recursive: true, force: true });
}

// Last resort (synchronous, e.g. after an uncaught exception): SIGTERM, so that
// guard.mjs still stops the gateway; our servers also go when their stdin closes.
process.on('exit', () => {
  for (const c of children) c.kill('SIGTERM');
  for (const t of tmps) rmSync(t, { recursive: true, force: true });
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    signalled = true;
    process.stderr.write(`\nbench: ${sig}, stopping everything\n`);
    stopAll().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------
// Helpers.

function positiveInt(raw, fallback) {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`expected a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

function onPath(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function chooseTool(forced) {
  if (forced === 'autocannon') return 'autocannon';
  if (forced === 'wrk') {
    if (!onPath('wrk')) throw new Error('BENCH_TOOL=wrk but wrk is not on PATH');
    return 'wrk';
  }
  if (forced) throw new Error(`BENCH_TOOL must be autocannon or wrk, got ${forced}`);
  return onPath('wrk') ? 'wrk' : 'autocannon';
}

function choosePin(raw) {
  if (raw === '0') return false;
  const possible = onPath('taskset') && cpus().length >= 2;
  if (raw === '1' && !possible) throw new Error('BENCH_PIN=1 needs taskset on PATH and at least 2 CPUs');
  if (raw !== undefined && raw !== '' && raw !== '1') throw new Error(`BENCH_PIN must be 0 or 1, got ${raw}`);
  return possible;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, HOST, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function log(msg) {
  process.stderr.write(`bench: ${msg}\n`);
}

async function expectBody(name, url, expected, headers = {}) {
  const res = await request(url, { headers });
  const body = await res.body.text();
  if (res.statusCode !== 200 || !body.includes(expected)) {
    throw new Error(`${name}: ${url} answered ${res.statusCode} ${body.slice(0, 200)}; expected 200 with ${expected}`);
  }
}

// ---------------------------------------------------------------------------
// The gateway: 1 worker, memory: volume, a cluster route on "/" and a
// directResponse route on "/direct".

async function startGateway(upstreamPort, root = ROOT) {
  const [dataPort, adminPort] = [await freePort(), await freePort()];
  const token = randomBytes(30).toString('base64url'); // 40 characters
  const tmp = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  tmps.push(tmp);
  const configFile = join(tmp, 'worker.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      volume: 'memory:',
      listen: { port: dataPort, host: HOST },
      admin: { listen: `${HOST}:${adminPort}`, keys: [{ id: 'root', tokenEnv: 'SY_BENCH_TOKEN', scopes: ['*'] }] },
      workers: 1,
      log: { level: 'warn' },
      drain: { graceMs: 1_000 },
    }),
  );
  // The gateway does not watch its parent: bench/guard.mjs stops it if this process dies.
  const gatewayCmd = [process.execPath, join(root, 'bin', 'run.js'), 'run', '--config', configFile];
  const { child, match } = await startChild('gateway', [join(HERE, 'guard.mjs'), ...gatewayCmd], {
    env: { SY_BENCH_TOKEN: token },
    cpu: CPU_SERVER, // inherited by the supervisor and its worker
    ready: /^switchyard ready data=(\S+) admin=(\S+) workers=(\d+) generation=(\d+)$/m,
    timeoutMs: 30_000,
  });
  const [, data, admin] = match;

  const api = async (path, body) => {
    const res = await request(`${admin}/api/v1/default/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`gateway admin ${path}: ${res.statusCode} ${text}`);
    return JSON.parse(text);
  };
  await api('config/set/cluster/bench-upstream', { targets: [`${HOST}:${upstreamPort}`] });
  await api('config/set/route/bench-cluster', { cluster: 'bench-upstream', pathPrefix: '/' });
  await api('config/set/route/bench-direct', { directResponse: { statusCode: 200, body: 'hello' }, pathPrefix: '/direct', order: 10 });
  // A cluster route with five steps (issue 4): the machinery's cost against the bare cluster route.
  await api('config/set/route/bench-steps', { cluster: 'bench-upstream', pathPrefix: '/steps', order: 10, steps: FIVE_STEPS });
  const published = await api('publish/go', {});
  if (!published.ok) throw new Error(`gateway publish failed: ${JSON.stringify(published)}`);
  return { data, generation: published.generation, pid: child.pid };
}

// ---------------------------------------------------------------------------
// Load generators. Both report { rps, p99Ms, requests, non2xx, errors }.

function runAutocannon(url, seconds, headers = {}) {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections: CONNECTIONS, pipelining: PIPELINING, duration: seconds }, (err, r) => {
      if (err) return reject(err);
      resolve({
        rps: r.requests.average,
        p99Ms: r.latency.p99,
        requests: r.requests.total,
        non2xx: r.non2xx,
        errors: r.errors + r.timeouts,
      });
    });
  });
}

function runWrk(url, seconds, headers = {}) {
  return new Promise((resolve, reject) => {
    const h = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
    const wrkArgs = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', ...h, url];
    const child = spawn(...pinned(CPU_LOAD, 'wrk', wrkArgs), { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => {
      children.delete(child);
      if (code !== 0) return reject(new Error(`wrk exited ${code}:\n${out}`));
      try {
        resolve(parseWrk(out));
      } catch (err) {
        reject(err);
      }
    });
  });
}

/** Parses `wrk --latency` output. */
function parseWrk(out) {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const p99 = /^\s*99%\s+([\d.]+)(us|ms|s)\b/m.exec(out);
  const total = /(\d+) requests in/.exec(out);
  if (!rps || !p99 || !total) throw new Error(`cannot parse wrk output:\n${out}`);
  const scale = { us: 0.001, ms: 1, s: 1000 }[p99[2]];
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(rps[1]),
    p99Ms: Number(p99[1]) * scale,
    requests: Number(total[1]),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    errors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}

const load = TOOL === 'wrk' ? runWrk : runAutocannon;

// ---------------------------------------------------------------------------

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function maxOrNull(xs) {
  return xs.some((x) => x === null || x === undefined) ? null : Math.max(...xs);
}

function fmt(n, digits = 0) {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r, ri) => {
      const line = r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
      return ri === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

async function main() {
  const startedAt = new Date();
  const loadBefore = loadavg();
  // autocannon runs inside this process: it belongs with the load generator.
  if (PIN && TOOL === 'autocannon') spawnSync('taskset', ['-p', '-c', CPU_LOAD, String(process.pid)], { stdio: 'ignore' });
  log(`pinning=${PIN ? `server under test on cpu ${CPU_SERVER}, load generator and upstream on cpu ${CPU_LOAD}` : 'off'}`);
  log(`tool=${TOOL} connections=${CONNECTIONS} pipelining=${PIPELINING} seconds=${SECONDS} (+${WARMUP_FIRST_SECONDS} s warm-up in round 1, ${WARMUP_SECONDS} s after) rounds=${ROUNDS} (alternating direction)`);

  const upstream = await startChild('upstream', [join(HERE, 'upstream.mjs'), String(await freePort())], { cpu: CPU_LOAD });
  const upstreamPort = Number(upstream.match[1]);
  const upstreamUrl = `http://${HOST}:${upstreamPort}`;
  const baseline = await startChild('baseline', [join(HERE, 'baseline-proxy.mjs'), upstreamUrl, String(await freePort())], { cpu: CPU_SERVER });
  const floor = await startChild('floor-proxy', [join(HERE, 'floor-proxy.mjs'), upstreamUrl, String(await freePort())], { cpu: CPU_SERVER });
  const bare = await startChild('bare-uws', [join(HERE, 'bare-uws.mjs'), String(await freePort())], { cpu: CPU_SERVER });
  const gateway = await startGateway(upstreamPort);
  log(`gateway ${gateway.data} generation=${gateway.generation}`);
  // A second gateway from another checkout (its dist/ built), measured in the same rounds:
  // an A/B of a change that the machine's drift cannot fake.
  const compare = COMPARE ? await startGateway(upstreamPort, COMPARE) : null;
  if (compare) log(`compare gateway (${COMPARE}) ${compare.data} generation=${compare.generation}`);

  // Within a round, the targets of each ratio run back to back (the ratios are per-round pairs).
  const allTargets = [
    { key: 'upstream', label: 'upstream direct (node:http)', url: `${upstreamUrl}/`, expect: '"service":"upstream"', pid: upstream.child.pid },
    { key: 'floor', label: 'floor: bare uWS + undici dispatch', url: `http://${HOST}:${floor.match[1]}/`, expect: '"service":"upstream"', pid: floor.child.pid },
    { key: 'baseline', label: 'fastify + @fastify/http-proxy', url: `http://${HOST}:${baseline.match[1]}/`, expect: '"service":"upstream"', pid: baseline.child.pid },
    { key: 'gatewayCluster', label: 'gateway cluster route', url: `${gateway.data}/`, expect: '"service":"upstream"', pid: gateway.pid },
    { key: 'gatewaySteps', label: 'gateway cluster route, 5 steps', url: `${gateway.data}/steps`, expect: '"service":"upstream"', pid: gateway.pid },
    { key: 'gatewayDirect', label: 'gateway directResponse', url: `${gateway.data}/direct`, expect: 'hello', pid: gateway.pid },
    { key: 'bareUws', label: 'bare uWebSockets.js', url: `http://${HOST}:${bare.match[1]}/`, expect: 'hello', pid: bare.child.pid },
  ];
  if (compare) {
    allTargets.push(
      { key: 'compareCluster', label: 'compare: cluster route', url: `${compare.data}/`, expect: '"service":"upstream"', pid: compare.pid },
      { key: 'compareSteps', label: 'compare: 5 steps', url: `${compare.data}/steps`, expect: '"service":"upstream"', pid: compare.pid },
    );
  }
  const targets = ONLY ? allTargets.filter((t) => ONLY.has(t.key)) : allTargets;
  if (ONLY) {
    const unknown = [...ONLY].filter((k) => !allTargets.some((t) => t.key === k));
    if (unknown.length) throw new Error(`BENCH_ONLY: unknown target ${unknown.join(', ')}; known: ${allTargets.map((t) => t.key).join(', ')}`);
  }
  // Every target gets the same request: the headers the five-step route needs (an API key
  // and an allowed Origin) go to all of them, so a ratio compares servers or routes, never loads.
  for (const t of targets) await expectBody(t.label, t.url, t.expect, REQUEST_HEADERS);

  const samples = Object.fromEntries(targets.map((t) => [t.key, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    // Rounds alternate direction (A B, then B A): a neighbour's load that rises or falls
    // over a pair's few seconds favours each side of the pair equally often.
    const order = round % 2 === 1 ? targets : [...targets].reverse();
    const warmup = round === 1 ? WARMUP_FIRST_SECONDS : WARMUP_SECONDS;
    for (const t of order) {
      log(`round ${round}/${ROUNDS}: ${t.label} ${t.url} (warm-up ${warmup} s, then ${SECONDS} s)`);
      await load(t.url, warmup, REQUEST_HEADERS);
      const cpuBefore = treeCpuMs(t.pid);
      const ticksBefore = cpuTicks();
      const r = await load(t.url, SECONDS, REQUEST_HEADERS);
      const cpuAfter = treeCpuMs(t.pid);
      const ticksAfter = cpuTicks();
      // The server's own CPU per request (µs), whatever the neighbours did meanwhile.
      r.serverCpuUsPerRequest = cpuBefore === null || cpuAfter === null || !r.requests ? null : ((cpuAfter - cpuBefore) * 1000) / r.requests;
      // Time the hypervisor took from our CPUs meanwhile: a round with much of it was disturbed from outside.
      r.stealPercent = PIN
        ? { server: stealPercent(ticksBefore, ticksAfter, CPU_SERVER), load: stealPercent(ticksBefore, ticksAfter, CPU_LOAD) }
        : { all: stealPercent(ticksBefore, ticksAfter, null) };
      const steal = Object.values(r.stealPercent).map((x) => (x === null ? '?' : `${fmt(x, 1)}%`)).join('/');
      log(`  ${fmt(r.rps)} req/s, p99 ${fmt(r.p99Ms, 2)} ms, server CPU ${r.serverCpuUsPerRequest === null ? '?' : fmt(r.serverCpuUsPerRequest, 1)} µs/req, steal ${steal}, non-2xx ${r.non2xx}, errors ${r.errors}`);
      samples[t.key].push(r);
    }
  }
  await stopAll();

  const results = {};
  for (const t of targets) {
    const s = samples[t.key];
    results[t.key] = {
      label: t.label,
      url: t.url,
      rps: median(s.map((x) => x.rps)),
      p99Ms: median(s.map((x) => x.p99Ms)),
      serverCpuUsPerRequest: s.some((x) => x.serverCpuUsPerRequest === null) ? null : median(s.map((x) => x.serverCpuUsPerRequest)),
      // The worst round's share of the server's CPU taken by the hypervisor (a disturbed round shows here).
      stealPercentMax: maxOrNull(s.map((x) => Object.values(x.stealPercent)[0])),
      non2xx: s.reduce((a, x) => a + x.non2xx, 0),
      errors: s.reduce((a, x) => a + x.errors, 0),
      rounds: s,
    };
  }
  // [key, label, numerator, denominator, target]
  const RATIOS = [
    ['gatewayClusterVsBaseline', 'gateway cluster / fastify baseline', 'gatewayCluster', 'baseline', TARGETS.clusterVsBaseline],
    ['gatewayClusterVsFloor', 'gateway cluster / floor (uWS + undici)', 'gatewayCluster', 'floor', null],
    ['floorVsBaseline', 'floor (uWS + undici) / fastify baseline', 'floor', 'baseline', null],
    ['gatewayClusterVsUpstream', 'gateway cluster / upstream direct', 'gatewayCluster', 'upstream', null],
    ['gatewayDirectVsBareUws', 'gateway directResponse / bare uWS', 'gatewayDirect', 'bareUws', TARGETS.directVsBareUws],
    ['gatewayStepsVsCluster', 'gateway 5 steps / gateway cluster route', 'gatewaySteps', 'gatewayCluster', TARGETS.fiveStepsVsCluster],
    ['clusterVsCompare', 'cluster route: this checkout / compare', 'gatewayCluster', 'compareCluster', null],
    ['stepsVsCompare', '5 steps: this checkout / compare', 'gatewaySteps', 'compareSteps', null],
  ];
  const ratios = {};
  for (const [key, label, a, b, target] of RATIOS) {
    if (!results[a] || !results[b]) continue;
    // Paired: both targets of a round ran back to back, so drift between rounds cancels out.
    const perRound = results[a].rounds.map((r, i) => r.rps / results[b].rounds[i].rps);
    const value = median(perRound);
    ratios[key] = { label, value, ofMedians: results[a].rps / results[b].rps, perRound, target, pass: target === null ? null : value >= target };
  }

  const report = {
    date: startedAt.toISOString(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', loadavgBefore: loadBefore, loadavgAfter: loadavg() },
    node: process.version,
    tool: TOOL,
    pinning: PIN ? { serverUnderTest: CPU_SERVER, loadGeneratorAndUpstream: CPU_LOAD } : null,
    load: { connections: CONNECTIONS, pipelining: PIPELINING, seconds: SECONDS, warmupSeconds: { firstRound: WARMUP_FIRST_SECONDS, otherRounds: WARMUP_SECONDS }, rounds: ROUNDS, alternating: true },
    results,
    ratios,
  };

  const rows = [['target', 'requests/s', 'p99 ms', 'server CPU µs/req', 'steal % (max)', 'non-2xx', 'errors']];
  for (const t of targets) {
    const r = results[t.key];
    const steal = r.stealPercentMax === null ? '?' : fmt(r.stealPercentMax, 1);
    rows.push([r.label, fmt(r.rps), fmt(r.p99Ms, 2), r.serverCpuUsPerRequest === null ? '?' : fmt(r.serverCpuUsPerRequest, 1), steal, r.non2xx, r.errors]);
  }
  const rrows = [['ratio (requests/s)', 'value', 'per round', 'target', 'verdict']];
  for (const r of Object.values(ratios)) {
    rrows.push([r.label, fmt(r.value, 2), r.perRound.map((x) => fmt(x, 2)).join(' '), r.target === null ? '-' : `>= ${fmt(r.target, 2)}`, r.pass === null ? '-' : r.pass ? 'pass' : 'FAIL']);
  }

  process.stdout.write(
    `\nswitchyard bench ${report.date}  node ${report.node}  ${report.machine.cpus} cpus  tool ${TOOL}  ` +
      `c=${CONNECTIONS} p=${PIPELINING} ${SECONDS}s${PIN ? ' pinned' : ''}${ROUNDS > 1 ? ` median of ${ROUNDS}` : ''}\n\n` +
      `${table(rows)}\n\n${table(rrows)}\n\n`,
  );

  const outDir = join(HERE, 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'latest.json'), JSON.stringify(report, null, 2) + '\n');
  log(`wrote ${join('bench', 'results', 'latest.json')}`);
  const bad = targets.filter((t) => results[t.key].non2xx || results[t.key].errors);
  if (bad.length) log(`warning: non-2xx or socket errors on ${bad.map((t) => t.label).join(', ')}: figures are suspect`);
}

main().catch(async (err) => {
  if (signalled) return; // the signal handler is already stopping everything, then exits
  process.stderr.write(`bench: ${err.stack ?? err}\n`);
  await stopAll();
  process.exit(1);
});
