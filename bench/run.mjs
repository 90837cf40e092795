// `npm run bench`: requests/s and p99 of the gateway against the upstream direct, a
// plain Node proxy baseline (fastify + @fastify/http-proxy) and a bare uWebSockets.js
// server, its TLS port against nginx terminating TLS, and WebSocket echo messages/s
// through it against the echo upstream direct, the node engine's HTTP/1.1 against fastify and
// the uws engine, its HTTP/2 over TLS (h2load) against nginx's, and gRPC calls and streamed
// messages through it (h2c) against the gRPC upstream direct, as ratios measured in one run on
// one machine.
//
// Every server runs in its own process on 127.0.0.1 with ports chosen at run time;
// the load generator (autocannon, in this process, or wrk when it is on PATH) drives
// one target at a time with the same load. Everything started here is stopped on
// exit, on errors and on SIGINT/SIGTERM.
//
// Environment:
//   BENCH_SECONDS  measured seconds per target and round (default 2); a warm-up precedes
//                  each (3 s in the first round, when the JIT is cold; 1 s after that)
//   BENCH_OBSERVE_SECONDS  measured seconds of each observability variant and pair loaded at
//                  once, per round (default 6: two 2-second windows of the same pair of twins
//                  read 0.89 to 1.16 apart, two 6-second ones 0.96 to 1.04)
//   BENCH_TOOL     autocannon | wrk (default: wrk when on PATH, else autocannon)
//   BENCH_ROUNDS   run every target this many times, report medians (default 10: ratios are
//                  medians of per-round pairs; rounds alternate direction, A B then B A)
//   BENCH_ONLY     comma-separated target keys to run (default: all); ratios whose two
//                  targets did not both run are left out
//   BENCH_PIN      1 | 0: pin the proxy under test to CPU 0 and the load generator and
//                  the upstream to CPU 1 with taskset (default 1 when taskset is on PATH
//                  and there are at least 2 CPUs)
//   BENCH_COMPARE  path of another checkout with dist/ built: its gateway runs too, as the
//                  targets compareCluster, compareSteps and compareDirect, in the same rounds (an A/B)
//   BENCH_UPSTREAM uws | node: the upstream's server (default uws; see upstream.mjs)
//   BENCH_H2       0: leave out the HTTP/2 targets and the gRPC unary ones (default: run them
//                  when h2load is on PATH)
//   BENCH_NGINX    0: leave out the nginx reference targets, plain, TLS and access log (default: run them
//                  when nginx is installed; see nginx-reference.mjs)
import { spawnSync } from 'node:child_process';
import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuTicks, cpuUsPerRequest, stealPercent, treeCpuMs } from './process-cpu.mjs';
import { loadGenerator, wsEchoLoad } from './load-generators.mjs';
import { fmt } from './table.mjs';
import { pairedRatios, renderTables, summarize } from './report.mjs';
import { BENCH_STEP_PACKAGES, REQUEST_HEADERS, UPSTREAM_BODY, UPSTREAM_KINDS, jwtRoute, packageStepsRoute } from './fixtures.mjs';
import { startGateway } from './gateway.mjs';
import { Processes } from './processes.mjs';
import { makeBenchCertificate, opensslAvailable } from './tls-cert.mjs';
import { expectBody, expectEcho, expectH2Body } from './sanity-checks.mjs';
import { h2Load } from './h2-load.mjs';
import { OBSERVE_KEYS, observeVariants } from './observe-variants.mjs';
import { fleetVariants } from './fleet-variants.mjs';
import { dnsVariants } from './dns-variants.mjs';
import { concurrentPairsOf, concurrentRatios, measureConcurrently } from './concurrent-pairs.mjs';
import { GRPC_KEYS, GRPC_UNARY_KEYS, grpcTargets } from './grpc-targets.mjs';
import { grpcStreamLoad } from './grpc-load.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(HERE);
const HOST = '127.0.0.1';
const CONNECTIONS = 50;
const PIPELINING = 1;
const WS_MESSAGE_BYTES = 32; // one small text message per round trip: the relay's cost per message, not bandwidth
// h2load: a few connections with several streams each (what an h2 client multiplexes).
const H2_CLIENTS = 16;
const H2_STREAMS = 10;
// gRPC server streaming: calls in flight on one connection, replies per call, payload bytes per reply.
const GRPC_STREAM_CALLS = 8;
const GRPC_STREAM_MESSAGES = 10_000;
const GRPC_STREAM_BYTES = 100;
const WARMUP_FIRST_SECONDS = 3;
const WARMUP_SECONDS = 1;
const SECONDS = positiveInt(process.env.BENCH_SECONDS, 2);
const ROUNDS = positiveInt(process.env.BENCH_ROUNDS, 10);
const OBSERVE_SECONDS = positiveInt(process.env.BENCH_OBSERVE_SECONDS, 6);
const TOOL = chooseTool(process.env.BENCH_TOOL);
const PIN = choosePin(process.env.BENCH_PIN);
const COMPARE = process.env.BENCH_COMPARE || null;
const UPSTREAM = chooseUpstream(process.env.BENCH_UPSTREAM);
const NGINX = process.env.BENCH_NGINX === '0' ? null : findNginx();
const H2LOAD = process.env.BENCH_H2 !== '0' && onPath('h2load');
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((k) => k.trim())) : null;
// With pinning: the server under test gets CPU 0 to itself; the load generator and the
// upstream share CPU 1, so they never steal cycles from the process being measured.
const CPU_SERVER = '0';
const CPU_LOAD = '1';

const procs = new Processes({ pin: PIN, cwd: ROOT });

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

/** The nginx binary, or null: Debian puts it in /usr/sbin, which a user's PATH may lack. */
function findNginx() {
  if (onPath('nginx')) return 'nginx';
  return spawnSync('test', ['-x', '/usr/sbin/nginx']).status === 0 ? '/usr/sbin/nginx' : null;
}

function chooseUpstream(raw) {
  if (raw === undefined || raw === '') return UPSTREAM_KINDS[0];
  if (!UPSTREAM_KINDS.includes(raw)) throw new Error(`BENCH_UPSTREAM must be one of ${UPSTREAM_KINDS.join(', ')}, got ${raw}`);
  return raw;
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

// Only this checkout's gateway gets the health-checked cluster, the TLS port and the WebSocket
// route: an older build may not know them.
// This checkout's gateway runs on the uws engine, named (an older build has no listen.engine).
const gatewayAt = async (upstreamPort, root = ROOT, { cert = null, wsUpstreamPort = null } = {}) =>
  startGateway(procs, {
    ...{ root, benchDir: HERE, host: HOST, upstreamPort, cpu: CPU_SERVER, freePort, checked: root === ROOT, cert, wsUpstreamPort, engine: root === ROOT ? 'uws' : null },
    ...(root === ROOT ? { extra: { steps: { packages: BENCH_STEP_PACKAGES } }, routes: [packageStepsRoute('bench-upstream'), jwtRoute('bench-upstream')] } : {}),
  });

const load = loadGenerator({
  tool: TOOL,
  connections: CONNECTIONS,
  pipelining: PIPELINING,
  spawnWrk: (args) => procs.spawn(CPU_LOAD, 'wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] }),
});
const wsLoad = wsEchoLoad({
  connections: CONNECTIONS,
  messageBytes: WS_MESSAGE_BYTES,
  spawnNode: (args) => procs.spawn(CPU_LOAD, process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] }),
});
const grpcStream = grpcStreamLoad({
  calls: GRPC_STREAM_CALLS,
  messages: GRPC_STREAM_MESSAGES,
  bytes: GRPC_STREAM_BYTES,
  spawnNode: (args) => procs.spawn(CPU_LOAD, process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] }),
});
const h2 = H2LOAD
  ? h2Load({
      clients: H2_CLIENTS,
      streams: H2_STREAMS,
      spawnH2load: (args) => procs.spawn(CPU_LOAD, 'h2load', args, { stdio: ['ignore', 'pipe', 'pipe'] }),
      tmpDir: procs.tmp('switchyard-bench-h2load-'),
    })
  : null;

async function main() {
  const startedAt = new Date();
  const loadBefore = loadavg();
  // autocannon runs inside this process: it belongs with the load generator.
  if (PIN && TOOL === 'autocannon') spawnSync('taskset', ['-p', '-c', CPU_LOAD, String(process.pid)], { stdio: 'ignore' });
  log(`pinning=${PIN ? `server under test on cpu ${CPU_SERVER}, load generator and upstream on cpu ${CPU_LOAD}` : 'off'}`);
  log(`tool=${TOOL} connections=${CONNECTIONS} pipelining=${PIPELINING} seconds=${SECONDS} (+${WARMUP_FIRST_SECONDS} s warm-up in round 1, ${WARMUP_SECONDS} s after) rounds=${ROUNDS} (alternating direction)`);

  const upstream = await procs.startNode('upstream', [join(HERE, 'upstream.mjs'), String(await freePort()), UPSTREAM], { cpu: CPU_LOAD });
  const upstreamPort = Number(upstream.match[1]);
  const upstreamUrl = `http://${HOST}:${upstreamPort}`;
  const wsEcho = await procs.startNode('ws-echo', [join(HERE, 'ws-echo.mjs'), String(await freePort())], { cpu: CPU_LOAD });
  const wsEchoPort = Number(wsEcho.match[1]);
  // The TLS targets' certificate, made now. They need wrk (autocannon sends no SNI to an IP
  // address, which the gateway refuses) and openssl.
  const cert = TOOL === 'wrk' && opensslAvailable() ? makeBenchCertificate(procs) : null;
  if (!cert) log(`no TLS targets: they need wrk${TOOL === 'wrk' ? ' and openssl on PATH' : ''}`);
  const baseline = await procs.startNode('baseline', [join(HERE, 'baseline-proxy.mjs'), upstreamUrl, String(await freePort())], { cpu: CPU_SERVER });
  const floor = await procs.startNode('floor-proxy', [join(HERE, 'floor-proxy.mjs'), upstreamUrl, String(await freePort())], { cpu: CPU_SERVER });
  // The HTTP/2 targets (h2load over TLS) need h2load and the certificate.
  const withH2 = Boolean(h2 && cert);
  if (!withH2) log(`no HTTP/2 targets: they need h2load on PATH (apt-get install nghttp2-client)${cert ? '' : ' and the TLS certificate'}${process.env.BENCH_H2 === '0' ? ' (BENCH_H2=0)' : ''}`);
  // One nginx serves the reference targets: plain on its port, TLS on a second one, h2 over TLS on a third.
  const nginxTlsArgs = cert ? [String(await freePort()), cert.certFile, cert.keyFile, ...(withH2 ? [String(await freePort())] : [])] : [];
  const startNginx = async (name, tlsArgs, env) =>
    procs.startNode(name, [join(HERE, 'nginx-reference.mjs'), NGINX, `${HOST}:${upstreamPort}`, String(await freePort()), ...tlsArgs], { cpu: CPU_SERVER, env });
  const nginx = NGINX ? await startNginx('nginx', nginxTlsArgs) : null;
  if (!nginx) log('nginx is not installed (apt-get install nginx-light): no nginx reference target');
  // A second nginx, the same but for its JSON access log: what logging every request costs a C
  // proxy on this machine. Its file is emptied every round (it appends: O_APPEND).
  const nginxLogFile = nginx ? join(procs.tmp('switchyard-bench-nginx-log-'), 'access.log') : null;
  const nginxLogged = nginx ? await startNginx('nginx-access-log', [], { SY_BENCH_NGINX_ACCESS_LOG: nginxLogFile }) : null;
  const bare = await procs.startNode('bare-uws', [join(HERE, 'bare-uws.mjs'), String(await freePort())], { cpu: CPU_SERVER });
  const gateway = await gatewayAt(upstreamPort, ROOT, { cert, wsUpstreamPort: wsEchoPort });
  log(`gateway (uws engine) ${gateway.data}${gateway.tls ? ` tls=${gateway.tls}` : ''} generation=${gateway.generation}`);
  // The same cluster route on the node engine (node:http; node:http2 on its TLS port, by ALPN).
  const nodeGateway = await startGateway(procs, { root: ROOT, benchDir: HERE, host: HOST, upstreamPort, cpu: CPU_SERVER, freePort, engine: 'node', cert: withH2 ? cert : null });
  log(`gateway (node engine) ${nodeGateway.data}${nodeGateway.tls ? ` tls=${nodeGateway.tls}` : ''} generation=${nodeGateway.generation}`);
  // A second gateway from another checkout (its dist/ built), measured in the same rounds:
  // an A/B of a change that the machine's drift cannot fake.
  const compare = COMPARE ? await gatewayAt(upstreamPort, COMPARE) : null;
  if (compare) log(`compare gateway (${COMPARE}) ${compare.data} generation=${compare.generation}`);
  const wantsVariant = (key) => !ONLY || ONLY.has(key);
  const variants = OBSERVE_KEYS.some(wantsVariant)
    ? await observeVariants(procs, { root: ROOT, benchDir: HERE, host: HOST, upstreamPort, cpu: CPU_SERVER, loadCpu: CPU_LOAD, freePort, wanted: wantsVariant })
    : null;
  const wantsFleet = !ONLY || [...ONLY].some((k) => k.startsWith('fleet') || k.startsWith('rateLimit'));
  const fleet = wantsFleet ? await fleetVariants(procs, { root: ROOT, benchDir: HERE, host: HOST, upstreamPort, cpu: CPU_SERVER, freePort, log }) : [];
  const wantsDns = !ONLY || ONLY.has('clusterDnsPair') || ONLY.has('clusterStaticPair');
  const dnsPair = wantsDns ? await dnsVariants(procs, { root: ROOT, benchDir: HERE, host: HOST, upstreamPort, cpu: CPU_SERVER, freePort, log }) : [];
  // gRPC: its own upstream and gateway (node engine, h2c), started only when one of its targets is wanted.
  if (!h2 && GRPC_UNARY_KEYS.some(wantsVariant)) log(`no gRPC unary targets: they need h2load on PATH (apt-get install nghttp2-client)${process.env.BENCH_H2 === '0' ? ' (BENCH_H2=0)' : ''}`);
  const grpc = await grpcTargets(procs, { root: ROOT, benchDir: HERE, host: HOST, upstreamPort, cpu: CPU_SERVER, loadCpu: CPU_LOAD, freePort, wanted: wantsVariant, h2, streamLoad: grpcStream, streamBytes: GRPC_STREAM_BYTES });

  // Within a round, the targets of each ratio run back to back (the ratios are per-round pairs).
  const PROXIED = UPSTREAM_BODY.toString(); // what the upstream and every proxy in front of it answer
  for (const t of variants?.targets ?? []) t.expect = PROXIED;
  const allTargets = [
    { key: 'upstream', label: `upstream direct (${UPSTREAM === 'uws' ? 'uWS' : 'node:http'})`, url: `${upstreamUrl}/`, expect: PROXIED, pid: upstream.child.pid },
    ...(nginx ? [{ key: 'nginx', label: 'nginx, 1 worker (reference)', url: `http://${HOST}:${nginx.match[1]}/`, expect: PROXIED, pid: nginx.child.pid }] : []),
    ...(nginxLogged ? [{ key: 'nginxAccessLog', label: 'nginx, JSON access log on (reference)', url: `http://${HOST}:${nginxLogged.match[1]}/`, expect: PROXIED, pid: nginxLogged.child.pid }] : []),
    { key: 'floor', label: 'floor: bare uWS + undici dispatch', url: `http://${HOST}:${floor.match[1]}/`, expect: PROXIED, pid: floor.child.pid },
    { key: 'baseline', label: 'fastify + @fastify/http-proxy', url: `http://${HOST}:${baseline.match[1]}/`, expect: PROXIED, pid: baseline.child.pid },
    { key: 'nodeCluster', label: 'gateway cluster route, node engine', url: `${nodeGateway.data}/`, expect: PROXIED, pid: nodeGateway.pid },
    { key: 'gatewayCluster', label: 'gateway cluster route', url: `${gateway.data}/`, expect: PROXIED, pid: gateway.pid },
    // Right after the cluster route it is compared with (an A/B needs the closest pair).
    ...(compare ? [{ key: 'compareCluster', label: 'compare: cluster route', url: `${compare.data}/`, expect: PROXIED, pid: compare.pid }] : []),
    // The same objects as variants.targets: a restart updates their url and pid.
    ...(variants?.targets ?? []),
    ...fleet.map((v) => ({ ...v, expect: PROXIED })),
    ...dnsPair.map((v) => ({ ...v, expect: PROXIED })),
    { key: 'gatewaySteps', label: 'gateway cluster route, 5 steps', url: `${gateway.data}/steps`, expect: PROXIED, pid: gateway.pid },
    { key: 'gatewayPackageSteps', label: 'gateway cluster route, 5 no-op package steps', url: `${gateway.data}/pkg-steps`, expect: PROXIED, pid: gateway.pid },
    { key: 'gatewayJwt', label: 'gateway cluster route, jwt-auth (RS256, keys held)', url: `${gateway.data}/jwt`, expect: PROXIED, pid: gateway.pid },
    { key: 'gatewayChecked', label: 'gateway cluster, 2 targets, health checks on', url: `${gateway.data}/checked`, expect: PROXIED, pid: gateway.pid },
    { key: 'gatewayDirect', label: 'gateway directResponse', url: `${gateway.data}/direct`, expect: 'hello', pid: gateway.pid },
    { key: 'bareUws', label: 'bare uWebSockets.js', url: `http://${HOST}:${bare.match[1]}/`, expect: 'hello', pid: bare.child.pid },
    ...(nginx && cert ? [{ key: 'nginxTls', label: 'nginx TLS, 1 worker (reference)', url: `https://${HOST}:${nginxTlsArgs[0]}/`, expect: PROXIED, pid: nginx.child.pid }] : []),
    ...(gateway.tls ? [{ key: 'gatewayTls', label: 'gateway cluster route over TLS', url: `${gateway.tls}/`, expect: PROXIED, pid: gateway.pid }] : []),
    // HTTP/2 over TLS, driven by h2load instead of wrk.
    ...(withH2 && nginx ? [{ key: 'nginxH2', label: 'nginx h2 over TLS, 1 worker (reference)', url: `https://${HOST}:${nginxTlsArgs[3]}/`, expect: PROXIED, h2: true, pid: nginx.child.pid }] : []),
    ...(nodeGateway.tls ? [{ key: 'nodeH2', label: 'gateway h2 over TLS, node engine', url: `${nodeGateway.tls}/`, expect: PROXIED, h2: true, pid: nodeGateway.pid }] : []),
    // gRPC over h2c (grpc-targets.mjs): each target brings its own load and sanity check.
    ...grpc,
    // WebSocket echo: "requests" are echoed messages (ws-load.mjs instead of wrk).
    { key: 'gatewayWs', label: 'gateway WebSocket echo (messages/s)', url: `${gateway.data.replace(/^http/, 'ws')}/ws`, ws: true, pid: gateway.pid },
    { key: 'wsDirect', label: 'WebSocket echo direct (messages/s)', url: `ws://${HOST}:${wsEchoPort}/ws`, ws: true, pid: wsEcho.child.pid },
  ];
  if (compare) {
    allTargets.push(
      { key: 'compareSteps', label: 'compare: 5 steps', url: `${compare.data}/steps`, expect: PROXIED, pid: compare.pid },
      { key: 'compareDirect', label: 'compare: directResponse', url: `${compare.data}/direct`, expect: 'hello', pid: compare.pid },
    );
  }
  const targets = ONLY ? allTargets.filter((t) => ONLY.has(t.key)) : allTargets;
  if (ONLY) {
    const unknown = [...ONLY].filter((k) => !allTargets.some((t) => t.key === k));
    const known = new Set([...allTargets.map((t) => t.key), ...OBSERVE_KEYS, ...GRPC_KEYS]);
    // A gRPC unary target left out for want of h2load was said so above.
    if (unknown.some((k) => !GRPC_KEYS.includes(k))) throw new Error(`BENCH_ONLY: unknown target ${unknown.join(', ')}; known: ${[...known].join(', ')}`);
  }
  // Every target gets the same request: the headers the five-step route needs (an API key
  // and an allowed Origin) go to all of them, so a ratio compares servers or routes, never loads.
  for (const t of targets) {
    if (t.check) await t.check(t);
    else if (t.ws) await expectEcho(t.label, t.url);
    else await (t.h2 ? expectH2Body : expectBody)(t.label, t.url, t.expect, REQUEST_HEADERS);
  }

  const samples = Object.fromEntries(targets.map((t) => [t.key, []]));
  // The observability pairs and the nginx access log pair are also measured loaded at once (concurrent-pairs.mjs).
  const pairs = TOOL === 'wrk' ? concurrentPairsOf(targets) : [];
  const together = Object.fromEntries(pairs.map((p) => [p.key, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    // The observability variants run on fresh processes in every round, warmed up at once (observe-variants.mjs).
    if (variants) {
      if (round > 1) {
        log(`round ${round}/${ROUNDS}: fresh processes for the observability variants`);
        await variants.restart();
        for (const t of variants.targets) await expectBody(t.label, t.url, t.expect, REQUEST_HEADERS);
      }
      const s = await variants.warm(load, REQUEST_HEADERS);
      log(`round ${round}/${ROUNDS}: the observability variants warmed up at once (${s} s)`);
    }
    if (nginxLogFile) truncateSync(nginxLogFile, 0);
    // Rounds alternate direction (A B, then B A): a neighbour's load that rises or falls
    // over a pair's few seconds favours each side of the pair equally often.
    const order = round % 2 === 1 ? targets : [...targets].reverse();
    const warmup = round === 1 ? WARMUP_FIRST_SECONDS : WARMUP_SECONDS;
    for (const t of order) {
      // The variants were warmed up at once (above): one more second alone each.
      const w = t.observe ? WARMUP_SECONDS : warmup;
      const seconds = t.observe ? OBSERVE_SECONDS : SECONDS;
      log(`round ${round}/${ROUNDS}: ${t.label} ${t.url} (warm-up ${w} s, then ${seconds} s)`);
      const drive = t.drive ?? (t.ws ? wsLoad : t.h2 ? h2 : load);
      await drive(t.url, w, REQUEST_HEADERS);
      const cpuBefore = treeCpuMs(t.pid);
      const ticksBefore = cpuTicks();
      const r = await drive(t.url, seconds, REQUEST_HEADERS);
      const cpuAfter = treeCpuMs(t.pid);
      const ticksAfter = cpuTicks();
      // The server's own CPU per request (µs), whatever the neighbours did meanwhile.
      r.serverCpuUsPerRequest = cpuUsPerRequest(cpuBefore, cpuAfter, r.requests);
      // Time the hypervisor took from our CPUs meanwhile: a round with much of it was disturbed from outside.
      r.stealPercent = PIN
        ? { server: stealPercent(ticksBefore, ticksAfter, CPU_SERVER), load: stealPercent(ticksBefore, ticksAfter, CPU_LOAD) }
        : { all: stealPercent(ticksBefore, ticksAfter, null) };
      const steal = Object.values(r.stealPercent).map((x) => (x === null ? '?' : `${fmt(x, 1)}%`)).join('/');
      log(`  ${fmt(r.rps)} req/s, p99 ${fmt(r.p99Ms, 2)} ms, server CPU ${r.serverCpuUsPerRequest === null ? '?' : fmt(r.serverCpuUsPerRequest, 1)} µs/req, steal ${steal}, non-2xx ${r.non2xx}, errors ${r.errors}`);
      samples[t.key].push(r);
    }
    for (const p of pairs) {
      // A variant idle since its own target (the others ran meanwhile) is loaded at once with
      // observeOff, just measured: the first round's warm-up, for both, evens them out again.
      log(`round ${round}/${ROUNDS}: ${p.a.label} and ${p.b.label}, loaded at once (warm-up ${WARMUP_FIRST_SECONDS} s, then ${OBSERVE_SECONDS} s)`);
      const r = await measureConcurrently(load, p, WARMUP_FIRST_SECONDS, OBSERVE_SECONDS, REQUEST_HEADERS);
      const us = (x) => (x.serverCpuUsPerRequest === null ? '?' : fmt(x.serverCpuUsPerRequest, 1));
      log(`  ${fmt(r.a.rps)} and ${fmt(r.b.rps)} req/s, server CPU ${us(r.a)} and ${us(r.b)} µs/req: ${r.perCpu === null ? '?' : fmt(r.perCpu, 2)} per CPU-second`);
      together[p.key].push(r);
    }
  }
  await procs.stopAll();

  const results = summarize(targets, samples);
  const ratios = { ...pairedRatios(results), ...concurrentRatios(pairs, together) };

  const report = {
    date: startedAt.toISOString(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', loadavgBefore: loadBefore, loadavgAfter: loadavg() },
    node: process.version,
    tool: TOOL,
    upstream: UPSTREAM,
    pinning: PIN ? { serverUnderTest: CPU_SERVER, loadGeneratorAndUpstream: CPU_LOAD } : null,
    load: { connections: CONNECTIONS, pipelining: PIPELINING, webSocketMessageBytes: WS_MESSAGE_BYTES, h2load: { clients: H2_CLIENTS, streamsPerClient: H2_STREAMS }, grpcStream: { calls: GRPC_STREAM_CALLS, messagesPerCall: GRPC_STREAM_MESSAGES, messageBytes: GRPC_STREAM_BYTES }, seconds: SECONDS, observeSeconds: OBSERVE_SECONDS, warmupSeconds: { firstRound: WARMUP_FIRST_SECONDS, otherRounds: WARMUP_SECONDS }, rounds: ROUNDS, alternating: true },
    results,
    ratios,
  };

  process.stdout.write(
    `\nswitchyard bench ${report.date}  node ${report.node}  ${report.machine.cpus} cpus  tool ${TOOL}  ` +
      `upstream ${UPSTREAM}  c=${CONNECTIONS} p=${PIPELINING} ${SECONDS}s${PIN ? ' pinned' : ''}${ROUNDS > 1 ? ` median of ${ROUNDS}` : ''}\n\n` +
      `${renderTables(targets, results, ratios)}\n\n`,
  );

  const outDir = join(HERE, 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'latest.json'), JSON.stringify(report, null, 2) + '\n');
  log(`wrote ${join('bench', 'results', 'latest.json')}`);
  const bad = targets.filter((t) => results[t.key].non2xx || results[t.key].errors);
  if (bad.length) log(`warning: non-2xx or socket errors on ${bad.map((t) => t.label).join(', ')}: figures are suspect`);
}

main().catch(async (err) => {
  if (procs.signalled) return; // the signal handler is already stopping everything, then exits
  process.stderr.write(`bench: ${err.stack ?? err}\n`);
  await procs.stopAll();
  process.exit(1);
});
