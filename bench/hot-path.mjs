// The worker's own JavaScript per proxied request, without the network: the real
// runtime of a compiled generation (route table, Exchange, steps, proxy handler, head
// writing) driven by a fake uWS request/response and a fake upstream dispatcher that
// answers at once. What is left out is what no code change here can remove (sockets,
// uWS's parser, undici's request and llhttp); what is measured is what ours costs, in
// ns per request and without the machine's noise. Prints one line per route.
//
//   npm run build && node bench/hot-path.mjs [label filter]
//   HOT_TRACING=1 HOT_OTLP=http://127.0.0.1:<port>/v1/traces node bench/hot-path.mjs 'cluster route'
import { compile } from '../dist/compiler/compile.js';
import { buildRuntime } from '../dist/worker/runtime.js';
import { DataServer } from '../dist/worker/data-server.js';
import { UwsDownstream } from '../dist/worker/engine/uws/uws-downstream.js';
import { RequestCallback } from '../dist/worker/engine/uws/request-callback.js';
import { LIMIT_DEFAULTS } from '../dist/shared/gateway-config-limits.js';
import { ClusterPools } from '../dist/worker/upstream-pools.js';
import { workerObservation } from '../dist/worker/observe/observation.js';
import { tracingFor } from '../dist/worker/observe/tracer.js';
import { AccessLog } from '../dist/worker/observe/access-log.js';
import { ReadyPath } from '../dist/worker/ready-path.js';
import { loadStepRegistry } from '../dist/steps/packages/load-packages.js';
import { StepStates } from '../dist/worker/step-states.js';
import { UpstreamGuard } from '../dist/shared/upstream-guard.js';
import { TargetHealth } from '../dist/worker/target-health.js';
import { WebSocketRouteCounts } from '../dist/worker/websocket-route-counts.js';
import { StepSites } from '../dist/worker/step-sites.js';
import { BENCH_STEP_PACKAGES, REQUEST_HEADERS, UPSTREAM_BODY, benchRoutes, packageStepsRoute } from './fixtures.mjs';

const drafts = [
  { kind: 'cluster', name: 'up', doc: { targets: ['127.0.0.1:9'] } },
  ...[...benchRoutes('up'), packageStepsRoute('up')].map(([name, doc]) => ({ kind: 'route', name, doc })),
];
// The steps as a worker with the no-op package installed has them (built-ins and the package).
const steps = await loadStepRegistry({ dirs: BENCH_STEP_PACKAGES, tenants: {} });
const compiled = compile({ tenant: 'default', published: [], drafts }, undefined, { steps });
if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));

// The upstream: answers every dispatch at once with the bench upstream's head and body,
// through undici's own handler callbacks (the raw head as Buffer pairs, as llhttp gives it).
const UP_HEADERS = { 'content-type': 'application/json', 'content-length': String(UPSTREAM_BODY.length), date: 'Thu, 26 Nov 2026 00:00:00 GMT', connection: 'keep-alive', 'keep-alive': 'timeout=5' };
const UP_RAW = Object.entries(UP_HEADERS).flatMap(([k, v]) => [Buffer.from(k), Buffer.from(v)]);
let sentHeaders = 0;
const fakeUpstream = {
  dispatch(opts, handler) {
    sentHeaders += opts.headers.length;
    handler.onConnect(() => {});
    handler.onHeaders(200, UP_RAW, () => {}, 'OK');
    handler.onData(UPSTREAM_BODY);
    handler.onComplete(null);
    return true;
  },
};
ClusterPools.prototype.pick = () => fakeUpstream;

// HOT_OTLP=<url> (with HOT_TRACING=1): spans are exported to that collector (bench/otlp-sink.mjs):
// requests run in chunks of 500 with a turn of the event loop between, and the CPU time
// of the whole process, export included, is reported per request.
const HOT_OTLP = process.env.HOT_OTLP;

// HOT_OBSERVE=0: metrics and request ids off (worker.json's defaults have them on).
const observing = process.env.HOT_OBSERVE !== '0';
let n = 0;
// HOT_ACCESS_LOG=<file>: every request's JSON access log line is written to that file.
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const accessLog = process.env.HOT_ACCESS_LOG
  ? new AccessLog({ enabled: true, format: 'json', sample: 1, fields: null, path: process.env.HOT_ACCESS_LOG, redactQuery: [] }, quiet)
  : null;
const seen = workerObservation(
  { metrics: observing, requestId: observing ? { header: 'x-request-id', trustIncoming: 'never' } : null, accessLog: null, tracing: null },
  [],
  () => `w0-0123abcd-${(n++).toString(36)}`,
  accessLog,
  () => {},
);
const leases = { acquire: () => true, remaining: () => 999_999 };
const runtime = buildRuntime(1, compiled.generation, {
  log: { info() {}, warn() {}, error() {}, debug() {} },
  traceId: () => 'trace',
  env: { rateLimits: leases, log: { info() {}, warn() {} } },
  tlsPort: null,
  meters: seen.meters,
  counting: seen.counting,
  requestIdHeader: seen.ids?.header ?? null,
  // HOT_TRACING=1: spans recorded; their export runs only with HOT_OTLP (below), else the queue fills, then drops.
  // Every generation's pools share these in a worker; the fake upstream stands in for their connections.
  pools: { upstreamGuard: UpstreamGuard.from({ allow: [], deny: [], tenants: {}, admin: { host: '127.0.0.1', port: 9001 }, data: { host: '127.0.0.1', port: 8080 } }), targetHealth: new TargetHealth(), reportOutlier() {} },
  webSockets: new WebSocketRouteCounts(),
  steps,
  states: new StepStates(),
  // As in a worker: its watchdog's sites are recorded as each step starts.
  stepSites: new StepSites(),
  tracing: tracingFor(process.env.HOT_TRACING === '1' ? { endpoint: HOT_OTLP ?? 'http://127.0.0.1:9/v1/traces', sampleRatio: 1, headersEnv: {}, serviceName: 'bench' } : null, { warn() {} }),
});

const PEER = new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1]).buffer;
let written = 0;
const res = {
  onAborted() {},
  onData() {},
  cork(f) {
    f();
  },
  writeStatus(s) {
    written += s.length;
  },
  writeHeader(k, v) {
    written += k.length + v.length;
  },
  end(b) {
    written += b ? b.length : 0;
    return res;
  },
  tryEnd(b) {
    written += b.length;
    return [true, true];
  },
  getWriteOffset: () => 0,
  getRemoteAddress: () => PEER,
  pause() {},
  resume() {},
};

function reqOf(url, headers) {
  return {
    getCaseSensitiveMethod: () => 'GET',
    getUrl: () => url,
    getQuery: () => undefined,
    getHeader: (n) => headers.find(([k]) => k === n)?.[1] ?? '',
    forEach(cb) {
      for (const [k, v] of headers) cb(k, v);
    },
  };
}

// HOT_READY_PATH=/readyz: worker.json readiness.dataPath in front of the routes (what the other paths pay for it).
const route = (method, path, host, tls, rid) => runtime.route(method, path, host, tls, rid);
const readyAt = process.env.HOT_READY_PATH;
// The data port's real per-request callback, called with the fakes instead of by uWS
// (the server is built but never listens).
const server = new DataServer(
  readyAt ? new ReadyPath().wrap(readyAt, route) : route,
  () => {
    throw new Error('internal error');
  },
  { error: (o) => console.error(o), info() {}, warn() {}, debug() {} },
  { paths: { escapedSlashes: 'reject', mergeSlashes: true }, trustedProxies: [], limits: LIMIT_DEFAULTS },
  seen,
  () => ({ name: 'uws', connections: 0, listen: async () => false, updateCertificates() {}, stopAccepting() {} }),
);
const ARRIVAL = { tls: false, port: '8080', protocol: '1.1', upgrade: false };
const inCallback = new RequestCallback();
const serve = (req) => server.handle(req, new UwsDownstream(res, null, inCallback), ARRIVAL);

// The same request headers on every route, as in run.mjs: only the route differs.
const HEADERS = [['host', '127.0.0.1:8080'], ...Object.entries(REQUEST_HEADERS)];
const cases = [
  ['cluster route', reqOf('/', HEADERS)],
  ['cluster route, 5 steps', reqOf('/steps', HEADERS)],
  ['cluster route, 5 package steps', reqOf('/pkg-steps', HEADERS)],
  ['directResponse', reqOf('/direct', HEADERS)],
];
// An optional argument picks the routes whose label contains it (for profiling one).
const only = process.argv[2];
const turn = () => new Promise((resolve) => setImmediate(resolve));
for (const [label, req] of cases) {
  if (only && !label.includes(only)) continue;
  if (HOT_OTLP || accessLog) {
    const run = async (n) => {
      for (let i = 0; i < n; i += 500) {
        for (let j = 0; j < 500; j++) serve(req);
        await turn();
      }
    };
    await run(200_000);
    const cpu0 = process.cpuUsage();
    await run(600_000);
    const cpu = process.cpuUsage(cpu0);
    process.stdout.write(`${label.padEnd(24)} ${(((cpu.user + cpu.system) * 1000) / 600_000).toFixed(0).padStart(6)} ns CPU/request, export or log included\n`);
    continue;
  }
  for (let i = 0; i < 300_000; i++) serve(req); // warm-up
  const n = 1_000_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) serve(req);
  const ns = Number(process.hrtime.bigint() - t0) / n;
  process.stdout.write(`${label.padEnd(24)} ${ns.toFixed(0).padStart(6)} ns/request\n`);
}
if (!written || !sentHeaders) throw new Error('nothing was written: the fakes are not wired');
