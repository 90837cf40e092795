/**
 * A data-plane worker process (forked by the supervisor through node:cluster).
 * It holds no state but the generation it was sent: it waits for `init`, builds the
 * runtime of that generation, listens, and swaps runtimes by one reference when a new
 * generation arrives. It never touches the store.
 */
import type { CompiledGeneration } from '../contracts/generation.js';
import { installUpstreamPolicy } from '../shared/upstream-guard.js';
import type { FromWorker, ToWorker } from '../contracts/ipc.js';
import { servedKeys, type MetricsDelta } from '../contracts/metrics.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { traceIdFactory } from '../shared/trace-id.js';
import { DataServer, type Router } from './data-server.js';
import { ServedGenerations } from './served-generations.js';
import { envelopeReply } from './envelope.js';
import { buildRuntime, type Runtime, type RuntimeDeps } from './runtime.js';
import { LeasedRateLimits } from './rate-limit-client.js';
import { servicePool } from './service-pools.js';
import { targetHealth } from './target-health.js';
import { setOutlierSender } from './outlier-reports.js';
import { workerObservation } from './observe/observation.js';
import { tracingFor } from './observe/tracer.js';
import type { Tracing } from './observe/request-trace.js';
import { installSecretBox, parseSealingKey, SecretBox } from '../shared/secret-box.js';
import { AccessLog } from './observe/access-log.js';
import { ReadyPath } from './ready-path.js';
import { loadEngine } from './engine/load-engine.js';

let current: Runtime | null = null;
const served = new ServedGenerations();
let server: DataServer | null = null;
let log: Logger = createLogger('info', { role: 'worker' });
let draining = false;
let deps: RuntimeDeps | null = null;
let tracing: Tracing | null = null;
/** The served generation's certificates, for a TLS listener that starts after it arrived. */
let currentTls: CompiledGeneration['serverTls'];
/** What the meters counted since their last shipment (null: nothing, or metrics off). */
let lastCounts: () => MetricsDelta | null = () => null;
/** worker.json `log.access`, when enabled. */
let accessLog: AccessLog | null = null;
/** worker.json `readiness.dataPath`'s verdict, when the data port answers one. */
let readyPath: ReadyPath | null = null;
const rateLimits = new LeasedRateLimits(send);

function send(msg: FromWorker): void {
  if (process.connected) process.send!(msg);
}

// No orphans: when the supervisor goes away (even by kill -9) the IPC channel closes.
process.on('disconnect', () => process.exit(0));
// Signals to the whole process group (Ctrl-C) are handled by the supervisor's drain.
process.on('SIGINT', () => {});
// A SIGTERM to the whole group (systemd, kill -TERM -pgid) reaches workers directly: they
// drain with the configured grace (from init), as the supervisor's drain message would.
let graceMs = 10_000;
process.on('SIGTERM', () => void drain(graceMs));
// A SIGHUP to the group (logrotate's postrotate, a closed terminal) reaches workers too:
// reopen, as the supervisor's message asks; Node's default would end the worker.
process.on('SIGHUP', () => accessLog?.reopen());
// The lines of a worker that exits without a drain (its supervisor gone) are written at once.
process.on('exit', () => accessLog?.flushSync(500));

process.on('message', (msg: ToWorker) => {
  try {
    if (msg.type === 'init') void init(msg);
    else if (msg.type === 'generation') swap(msg.generation.id, msg.generation.payload);
    else if (msg.type === 'health') targetHealth.set(msg.unhealthy);
    else if (msg.type === 'lease') rateLimits.answer(msg.id, msg.granted, msg.retryAfterMs, msg.remaining, msg.unavailable === true, msg.unbacked === true);
    else if (msg.type === 'drain') void drain(msg.graceMs);
    else if (msg.type === 'readiness') readyPath?.set(msg.ready);
    else if (msg.type === 'reopen-logs') accessLog?.reopen();
    else if (msg.type === 'in-flight') send({ type: 'in-flight', id: msg.id, counts: current?.inFlight(msg.cluster) ?? {} });
    else if (msg.type === 'status') send({ type: 'status', id: msg.id, connections: server?.connections ?? 0, generations: served.list(current) });
  } catch (err) {
    log.error({ err }, 'worker failed to handle a supervisor message');
  }
});

setOutlierSender((cluster, target) => send({ type: 'outlier', cluster, target }));
send({ type: 'booted' });

async function init(msg: Extract<ToWorker, { type: 'init' }>): Promise<void> {
  log = createLogger(msg.logLevel as 'info', { role: 'worker', slot: msg.slot });
  graceMs = msg.graceMs;
  const access = msg.dataPlane.observe.accessLog;
  accessLog = access === null ? null : new AccessLog(access, log);
  const traceId = traceIdFactory(msg.slot);
  const tls = msg.dataPlane.tls;
  const seen = workerObservation(msg.dataPlane.observe, msg.dataPlane.trustedProxies, traceId, accessLog, (delta) => send({ type: 'metrics', delta }));
  if (seen.counting) lastCounts = () => seen.meters.take();
  tracing = tracingFor(msg.dataPlane.observe.tracing, log);
  deps = {
    log,
    traceId,
    env: { rateLimits, log, servicePool, traceId },
    tlsPort: tls?.port ?? null,
    meters: seen.meters,
    counting: seen.counting,
    requestIdHeader: seen.ids?.header ?? null,
    tracing,
  };
  installUpstreamPolicy(msg.dataPlane.upstreams);
  const sealing = msg.dataPlane.sealingKeyEnv;
  installSecretBox(sealing === undefined ? null : new SecretBox(parseSealingKey(process.env[sealing])!));
  if (msg.generation) current = buildRuntime(msg.generation.id, msg.generation.payload, deps, true);
  currentTls = msg.generation?.payload.serverTls;
  // `current` is read once: the request keeps that generation to its end.
  const route: Router = (method, path, host, tls, rid) => (current === null ? envelopeReply('Svc.Data.NotPublished', rid || traceId()) : current.route(method, path, host, tls, rid));
  const readyAt = msg.dataPlane.readyPath;
  if (readyAt !== undefined) readyPath = new ReadyPath();
  server = new DataServer(
    readyPath === null || readyAt === undefined ? route : readyPath.wrap(readyAt, route),
    (code, rid) => envelopeReply(code, rid || traceId()),
    log,
    msg.dataPlane,
    seen,
    await loadEngine(msg.dataPlane.engine),
  );
  const ok = await server.listen(msg.listen.host, msg.listen.port);
  if (!ok) return listenFailed(`${msg.listen.host}:${msg.listen.port}`);
  if (tls && !(await server.listenTls(tls.host, tls.port, currentTls))) return listenFailed(`${tls.host}:${tls.port}`);
  send({ type: 'listening' });
}

function listenFailed(address: string): void {
  send({ type: 'listen-failed', error: { code: 'Bind', message: `cannot listen on ${address}` } });
  setTimeout(() => process.exit(11), 50);
}

/** Builds the new generation off the hot path, then swaps one reference. */
function swap(id: number, payload: CompiledGeneration): void {
  let next: Runtime;
  try {
    next = buildRuntime(id, payload, deps!);
  } catch (err) {
    log.error({ err, generation: id }, 'cannot build generation');
    send({ type: 'nack', generation: id, error: { code: 'Svc.Internal', message: (err as Error).message } });
    return;
  }
  const prev = current;
  current = next;
  currentTls = payload.serverTls;
  server?.updateCertificates(payload.serverTls);
  if (prev) served.retire(prev);
  deps!.meters.keepOnly(servedKeys(payload));
  send({ type: 'ack', generation: id });
}

async function drain(graceMs: number): Promise<void> {
  if (draining) return;
  draining = true;
  await server?.drain(graceMs);
  current?.retire();
  // The access log's lines and the spans still queued go out, together and briefly: a collector that is down cannot hold the exit.
  await Promise.all([accessLog?.flush(1_000), tracing?.flush(1_000)]);
  // The last counts go before the exit: the supervisor's totals miss nothing of a drained worker.
  const delta = lastCounts();
  if (delta !== null && process.connected) process.send!({ type: 'metrics', delta } satisfies FromWorker, () => process.exit(0));
  else process.exit(0);
}
