/**
 * A data-plane worker process (forked by the supervisor through node:cluster): the
 * process shell over its WorkerContext. It waits for `init`, builds the runtime of that
 * generation, listens, and swaps runtimes by one reference when a new generation
 * arrives. It never touches the store.
 */
import type { FromWorker, ToWorker } from '../contracts/ipc.js';
import { DataServer, type Router } from './data-server.js';
import { envelopeReply } from './envelope.js';
import { ReadyPath } from './ready-path.js';
import { loadEngine } from './engine/load-engine.js';
import { WorkerContext } from './worker-context.js';
import { startFailed, watchProcessFaults } from './process-faults.js';
import { loadStepRegistry } from '../steps/packages/load-packages.js';
import type { StepRegistry } from '../steps/step-registry.js';
import { heapUsedMb } from './heap-bound.js';

const ctx = new WorkerContext((msg: FromWorker) => {
  if (process.connected) process.send!(msg);
});

// No orphans: when the supervisor goes away (even by kill -9) the IPC channel closes.
process.on('disconnect', () => process.exit(0));
// Signals to the whole process group (Ctrl-C) are handled by the supervisor's drain.
process.on('SIGINT', () => {});
// A SIGTERM to the whole group (systemd, kill -TERM -pgid) reaches workers directly: they
// drain with the configured grace (from init), as the supervisor's drain message would.
process.on('SIGTERM', () => void ctx.drain(ctx.graceMs));
// A SIGHUP to the group (logrotate's postrotate, a closed terminal) reaches workers too:
// reopen, as the supervisor's message asks; Node's default would end the worker.
process.on('SIGHUP', () => ctx.accessLog?.reopen());
// A step's floating rejection or a callback's exception no request owns (process-faults.ts).
watchProcessFaults(ctx);

process.on('message', (msg: ToWorker) => {
  try {
    // A start that fails ends the worker, as Node would have before the fault handlers: the supervisor sees it exit.
    if (msg.type === 'init') init(msg).catch((err: unknown) => startFailed(err));
    else if (msg.type === 'generation') ctx.swap(msg.generation.id, msg.generation.payload);
    else if (msg.type === 'health') ctx.targetHealth.set(msg.unhealthy);
    else if (msg.type === 'key-sets') ctx.keySets.update(msg.sets, msg.dropped);
    else if (msg.type === 'discovery') ctx.discovery.update(msg.sets);
    else if (msg.type === 'lease') ctx.rateLimits.answer(msg.id, msg.granted, msg.retryAfterMs, msg.remaining, msg.unavailable === true, msg.unbacked === true);
    else if (msg.type === 'drain') void ctx.drain(msg.graceMs);
    else if (msg.type === 'readiness') ctx.readyPath?.set(msg.ready);
    else if (msg.type === 'reopen-logs') ctx.accessLog?.reopen();
    else if (msg.type === 'in-flight') ctx.send({ type: 'in-flight', id: msg.id, counts: ctx.current?.inFlight(msg.cluster) ?? {} });
    else if (msg.type === 'status') ctx.send({ type: 'status', id: msg.id, connections: ctx.server?.connections ?? 0, generations: ctx.served.list(ctx.current), heapMb: heapUsedMb() });
  } catch (err) {
    ctx.log.error({ err }, 'worker failed to handle a supervisor message');
  }
});

ctx.send({ type: 'booted' });

async function init(msg: Extract<ToWorker, { type: 'init' }>): Promise<void> {
  let steps: StepRegistry;
  try {
    steps = await loadStepRegistry(msg.dataPlane.steps);
  } catch (err) {
    // The supervisor loaded the same packages at its start: this worker's copy changed since.
    ctx.log.fatal({ err, slot: msg.slot }, `worker cannot load the step packages: ${(err as Error).message}`);
    setTimeout(() => process.exit(10), 50);
    return;
  }
  const { traceId, seen } = ctx.start(msg, steps);
  const log = ctx.log;
  const tls = msg.dataPlane.tls;
  // `current` is read once: the request keeps that generation to its end.
  const route: Router = (method, path, host, tls, rid) => {
    const current = ctx.current;
    return current === null ? envelopeReply('Svc.Data.NotPublished', rid || traceId()) : current.route(method, path, host, tls, rid);
  };
  const readyAt = msg.dataPlane.readyPath;
  const readyPath = (ctx.readyPath = readyAt === undefined ? null : new ReadyPath());
  const server = (ctx.server = new DataServer(
    readyPath === null || readyAt === undefined ? route : readyPath.wrap(readyAt, route),
    (code, rid) => envelopeReply(code, rid || traceId()),
    log,
    msg.dataPlane,
    seen,
    await loadEngine(msg.dataPlane.engine),
  ));
  const ok = await server.listen(msg.listen.host, msg.listen.port);
  if (!ok) return listenFailed(`${msg.listen.host}:${msg.listen.port}`);
  if (tls && !(await server.listenTls(tls.host, tls.port, ctx.currentTls))) return listenFailed(`${tls.host}:${tls.port}`);
  ctx.send({ type: 'listening' });
}

function listenFailed(address: string): void {
  ctx.send({ type: 'listen-failed', error: { code: 'Bind', message: `cannot listen on ${address}` } });
  setTimeout(() => process.exit(11), 50);
}
