import type { CompiledGeneration } from '../contracts/generation.js';
import type { FromWorker, ToWorker } from '../contracts/ipc.js';
import { servedKeys, type MetricsDelta } from '../contracts/metrics.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { traceIdFactory } from '../shared/trace-id.js';
import { UpstreamGuard } from '../shared/upstream-guard.js';
import { installSecretBox, parseSealingKey, SecretBox } from '../shared/secret-box.js';
import type { DataServer } from './data-server.js';
import { ServedGenerations } from './served-generations.js';
import { buildRuntime, type Runtime, type RuntimeDeps } from './runtime.js';
import { LeasedRateLimits } from './rate-limit-client.js';
import { ServicePools } from './service-pools.js';
import { TargetHealth } from './target-health.js';
import { WebSocketRouteCounts } from './websocket-route-counts.js';
import { workerObservation } from './observe/observation.js';
import { tracingFor } from './observe/tracer.js';
import type { Tracing } from './observe/request-trace.js';
import { AccessLog } from './observe/access-log.js';
import type { ReadyPath } from './ready-path.js';
import type { StepRegistry } from '../steps/step-registry.js';
import { StepStates, stepBuckets } from './step-states.js';
import { StepSites } from './step-sites.js';
import { StallWatchdog } from './stall-watchdog.js';
import { watchHeap } from './heap-bound.js';
import { reportPipe } from './report-pipe.js';
import { WorkerKeySets } from './worker-key-sets.js';
import { WorkerDiscovery } from './worker-discovery.js';
import { expandGeneration } from '../shared/discovery-targets.js';

type InitMessage = Extract<ToWorker, { type: 'init' }>;

/**
 * All one worker process holds, in the one object main.ts creates at boot and passes
 * down: what outlives generations (the runtime served, the targets' health, leases, open
 * WebSockets) and, from `start` on, what worker.json's settings build. No worker module
 * keeps state of its own but memo tables of pure functions (status lines, formatted
 * addresses, a fixed reply's node header lines), so a test can build as many workers'
 * parts as it needs.
 */
export class WorkerContext {
  log: Logger = createLogger('info', { role: 'worker' });
  /** worker.json `drain.graceMs` (from init): what a SIGTERM sent to the whole group drains with. */
  graceMs = 10_000;
  draining = false;
  /** The runtime new requests enter; each request reads it once and keeps that generation to its end. */
  current: Runtime | null = null;
  /** The served generation's certificates, for a TLS listener that starts after it arrived. */
  currentTls: CompiledGeneration['serverTls'];
  readonly served = new ServedGenerations();
  readonly targetHealth = new TargetHealth();
  /** The addresses the supervisor resolved for `{dns}` targets, kept across generations. */
  readonly discovery: WorkerDiscovery = new WorkerDiscovery(this.targetHealth, () => this.keepMeters());
  /** The generation served (its per-target meters are the ones kept). */
  private servedPayload: CompiledGeneration | null = null;
  readonly webSockets = new WebSocketRouteCounts();
  /** The steps' per-route state (a cache's answers, auth memos, circuits), kept across generations by step bucket. */
  readonly stepStates = new StepStates();
  /** The step buckets of the generation served: what stepStates keeps after a build that failed. */
  private servedBuckets = new Set<string>();
  readonly rateLimits: LeasedRateLimits;
  /** Key sets the supervisor fetched and pushed (jwt-auth jwksUri/issuer), kept across generations. */
  readonly keySets: WorkerKeySets;
  /** worker.json `upstreams` (null before init: no pool exists before a runtime does). */
  upstreamGuard: UpstreamGuard | null = null;
  /** What every runtime is built with (null before init). */
  deps: RuntimeDeps | null = null;
  server: DataServer | null = null;
  tracing: Tracing | null = null;
  /** What the meters counted since their last shipment (null: nothing, or metrics off). */
  lastCounts: () => MetricsDelta | null = () => null;
  /** worker.json `log.access`, when enabled. */
  accessLog: AccessLog | null = null;
  /** worker.json `readiness.dataPath`'s verdict, when the data port answers one. */
  readyPath: ReadyPath | null = null;
  /** An uncaught exception happened: the supervisor was asked, once, to replace this worker. */
  faulted = false;
  /** worker.json `limits.eventLoopStallMs`'s watchdog (null without the supervisor's report pipe). */
  watchdog: StallWatchdog | null = null;
  /** Stops worker.json `limits.workerHeapMb`'s check. */
  private stopHeapWatch = () => {};

  constructor(readonly send: (msg: FromWorker) => void) {
    this.rateLimits = new LeasedRateLimits(send);
    this.keySets = new WorkerKeySets(send);
  }

  /** A target's failures in a row reached another multiple of consecutiveFailures: the supervisor decides node-wide. */
  readonly reportOutlier = (cluster: string, target: string): void => this.send({ type: 'outlier', cluster, target });

  /** The step last started in this worker (`tenant/route step`), for a fault no request owns; null: none recorded. */
  lastStep(): string | null {
    const s = this.deps?.stepSites?.lastStarted();
    return s ? `${s.tenant}/${s.route} ${s.step}` : null;
  }

  /** Builds what init's settings say, and the first runtime; the caller then opens the data port. */
  start(msg: InitMessage, steps: StepRegistry) {
    const log = (this.log = createLogger(msg.logLevel as 'info', { role: 'worker', slot: msg.slot }));
    this.graceMs = msg.graceMs;
    this.keySets.update(msg.keySets ?? []);
    this.discovery.update(msg.discovery ?? []);
    const observe = msg.dataPlane.observe;
    this.accessLog = observe.accessLog === null ? null : new AccessLog(observe.accessLog, log);
    const traceId = traceIdFactory(msg.slot);
    const seen = workerObservation(observe, msg.dataPlane.trustedProxies, traceId, this.accessLog, (delta) => this.send({ type: 'metrics', delta }));
    if (seen.counting) this.lastCounts = () => seen.meters.take();
    const tracing = (this.tracing = tracingFor(observe.tracing, log));
    const guard = (this.upstreamGuard = UpstreamGuard.from(msg.dataPlane.upstreams));
    const limits = msg.dataPlane.limits;
    const fd = reportPipe();
    const stepSites = fd === null ? null : new StepSites();
    if (stepSites !== null) this.watchdog = new StallWatchdog(stepSites, limits.eventLoopStallMs, fd!, log);
    if (limits.workerHeapMb > 0) this.stopHeapWatch = watchHeap(limits.workerHeapMb, this.send);
    this.deps = {
      log,
      traceId,
      env: { rateLimits: this.rateLimits, log, servicePool: new ServicePools(guard).pool, traceId, keySets: this.keySets },
      tlsPort: msg.dataPlane.tls?.port ?? null,
      meters: seen.meters,
      counting: seen.counting,
      requestIdHeader: seen.ids?.header ?? null,
      tracing,
      pools: { upstreamGuard: guard, targetHealth: this.targetHealth, reportOutlier: this.reportOutlier, discovery: this.discovery },
      webSockets: this.webSockets,
      steps,
      states: this.stepStates,
      stepSites,
    };
    const sealing = msg.dataPlane.sealingKeyEnv;
    installSecretBox(sealing === undefined ? null : new SecretBox(parseSealingKey(process.env[sealing])!));
    if (msg.generation) {
      this.current = buildRuntime(msg.generation.id, msg.generation.payload, this.deps, true);
      this.servedPayload = msg.generation.payload;
      this.servedBuckets = stepBuckets(msg.generation.payload);
    }
    this.watchdog?.sync();
    this.currentTls = msg.generation?.payload.serverTls;
    return { traceId, seen };
  }

  /** Per-target meters of the served generation's targets only, its DNS addresses as found now (a removed address's series goes). */
  private keepMeters(): void {
    if (this.deps && this.servedPayload) this.deps.meters.keepOnly(servedKeys(expandGeneration(this.servedPayload, this.discovery.get)));
  }

  /** Builds the new generation off the hot path, then swaps one reference. */
  swap(id: number, payload: CompiledGeneration): void {
    let next: Runtime;
    try {
      next = buildRuntime(id, payload, this.deps!);
    } catch (err) {
      // State the failed build made for buckets the served generation does not use goes.
      this.stepStates.keepOnly(this.servedBuckets);
      this.watchdog?.sync();
      this.log.error({ err, generation: id }, 'cannot build generation');
      this.send({ type: 'nack', generation: id, error: { code: 'Svc.Internal', message: (err as Error).message } });
      return;
    }
    this.watchdog?.sync();
    const prev = this.current;
    this.current = next;
    this.currentTls = payload.serverTls;
    this.server?.updateCertificates(payload.serverTls);
    if (prev) this.served.retire(prev);
    this.servedPayload = payload;
    this.discovery.served(payload); // the sets only the generation before used go now, and the meters with them
    this.keepMeters();
    // Steps the new generation no longer has (or has with other settings) drop their state; the old runtime's closures keep theirs until its requests end.
    this.servedBuckets = stepBuckets(payload);
    this.stepStates.keepOnly(this.servedBuckets);
    this.send({ type: 'ack', generation: id });
  }

  async drain(graceMs: number): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    this.stopHeapWatch(); // leaving already: a replacement is not asked twice
    await this.server?.drain(graceMs);
    this.current?.retire();
    // The access log's lines and the spans still queued go out, together and briefly: a collector that is down cannot hold the exit.
    await Promise.all([this.accessLog?.flush(1_000), this.tracing?.flush(1_000)]);
    // The last counts go before the exit: the supervisor's totals miss nothing of a drained worker.
    const delta = this.lastCounts();
    if (delta !== null && process.connected) process.send!({ type: 'metrics', delta } satisfies FromWorker, () => process.exit(0));
    else process.exit(0);
  }
}
