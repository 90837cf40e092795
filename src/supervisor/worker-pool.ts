import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { DataPlaneSettings, FromWorker, GenerationMessage, HealthTable, ToWorker } from '../contracts/ipc.js';
import type { Logger } from '../shared/logger.js';
import { RespawnBackoff } from './respawn-backoff.js';
import type { WorkerState, WorkerStatus } from '../contracts/node-status.js';
import type { WorkerPoolView } from '../admin/services.js';

/**
 * V8 flags every worker runs with. Without `--no-allocation-site-pretenuring`, V8 may move a
 * per-request allocation site to the old generation after a full collection, and what those
 * dead objects point to then survives every young collection; a traced worker can stay in
 * that costly state for the rest of its life.
 */
export const WORKER_V8_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring'];


export interface WorkerSlot {
  slot: number;
  worker: Worker | null;
  state: WorkerState;
  generation: number;
  restarts: number;
  startedAt: number;
  backoff: RespawnBackoff;
}

export interface PoolOptions {
  count: number;
  listen: { host: string; port: number };
  logLevel: string;
  /** drain.graceMs, handed to workers at init (see ToWorker init). */
  graceMs: number;
  /** paths and trustedProxies from worker.json, handed to workers at init. */
  dataPlane: DataPlaneSettings;
  log: Logger;
  /** The generation a (re)spawned worker must load before it listens. */
  currentGeneration: () => GenerationMessage | null;
  /** The health checks' verdicts a (re)spawned worker starts with. */
  currentHealth: () => HealthTable;
}

export class BindError extends Error {}

const WORKER_ENTRY = fileURLToPath(new URL('../worker/main.js', import.meta.url));

/**
 * Forks the data-plane workers, respawns the ones that die (with backoff when they
 * keep dying), and fans messages out. Workers listen on the data port themselves
 * (SO_REUSEPORT); the kernel spreads connections.
 */
export class WorkerPool implements WorkerPoolView {
  readonly slots: WorkerSlot[] = [];
  private stopping = false;
  private readonly ackWaiters = new Set<(slot: number, msg: FromWorker) => void>();
  private readonly changeWatchers = new Set<() => void>();

  constructor(private readonly opts: PoolOptions) {
    // SWITCHYARD_WORKER_NODE_ARGS: extra node flags for workers only, for profiling
    // (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"; node refuses those in NODE_OPTIONS).
    const extra = process.env.SWITCHYARD_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    // Where the node engine shares this process's socket (Node before 22.12: no SO_REUSEPORT),
    // the workers accept from it themselves: node's round-robin hands a connection to a worker
    // and holds it forever when that worker is killed before it took it (a client waited 3 s and
    // more at every kill -9 under load, test/worker-kill-under-load.test.ts).
    cluster.schedulingPolicy = cluster.SCHED_NONE;
    cluster.setupPrimary({ exec: WORKER_ENTRY, silent: false, execArgv: [...process.execArgv, ...WORKER_V8_FLAGS, ...extra] });
  }

  /** Forks every worker; resolves once all listen, rejects with BindError if any cannot bind. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      let listening = 0;
      for (let i = 0; i < this.opts.count; i++) {
        const slot: WorkerSlot = { slot: i, worker: null, state: 'starting', generation: 0, restarts: 0, startedAt: 0, backoff: new RespawnBackoff() };
        this.slots.push(slot);
        this.fork(slot, (err) => {
          if (err) return reject(err);
          if (++listening === this.opts.count) resolve();
        });
      }
    });
  }

  private fork(slot: WorkerSlot, onFirstListen?: (err?: Error) => void): void {
    // uWS reads its head-size limit from the environment once, when the worker loads it.
    const worker = cluster.fork({ SWITCHYARD_WORKER_SLOT: String(slot.slot), UWS_HTTP_MAX_HEADERS_SIZE: String(this.opts.dataPlane.limits.maxHeadBytes) });
    slot.worker = worker;
    slot.state = 'starting';
    slot.startedAt = Date.now();
    this.changed();
    // A worker's IPC pipe closes a few milliseconds before its exit event: a send in that
    // window fails. The exit handler respawns it; the failure must not end the supervisor.
    worker.on('error', (err) => this.opts.log.warn({ slot: slot.slot, err }, 'worker IPC failed'));
    worker.on('message', (msg: FromWorker) => {
      if (msg.type === 'booted') {
        if (this.stopping) {
          worker.process.kill('SIGKILL'); // started while the node stops: it must never listen
          return;
        }
        const gen = this.opts.currentGeneration();
        slot.generation = gen?.id ?? 0;
        const init: ToWorker = { type: 'init', slot: slot.slot, listen: this.opts.listen, generation: gen, logLevel: this.opts.logLevel, graceMs: this.opts.graceMs, dataPlane: this.opts.dataPlane };
        this.post(worker, init);
        this.post(worker, { type: 'health', unhealthy: this.opts.currentHealth() });
      } else if (msg.type === 'listening') {
        slot.state = 'listening';
        // A publish that ran while this worker started skipped it: catch it up.
        const cur = this.opts.currentGeneration();
        if (cur && cur.id !== slot.generation) this.post(worker, { type: 'generation', generation: cur });
        this.changed();
        onFirstListen?.();
        onFirstListen = undefined;
      } else if (msg.type === 'listen-failed') {
        onFirstListen?.(new BindError(msg.error.message));
        onFirstListen = undefined;
      } else {
        if (msg.type === 'ack') slot.generation = msg.generation;
        for (const w of this.ackWaiters) w(slot.slot, msg);
        if (msg.type === 'ack') this.changed();
      }
    });
    worker.on('exit', (code, signal) => {
      if (slot.worker !== worker) return;
      slot.state = 'exited';
      slot.worker = null;
      this.changed();
      if (this.stopping || onFirstListen) {
        onFirstListen?.(new Error(`worker ${slot.slot} exited during startup (code ${code}, signal ${signal})`));
        onFirstListen = undefined;
        return;
      }
      const delay = slot.backoff.next(Date.now() - slot.startedAt);
      this.opts.log.warn({ slot: slot.slot, pid: worker.process.pid, code, signal, respawnInMs: delay }, 'worker exited; respawning');
      setTimeout(() => {
        if (this.stopping) return;
        slot.restarts++;
        this.fork(slot);
      }, delay).unref();
    });
  }

  /** Sends `msg` to every worker that has a process: starting, listening or draining (a reopen reaches each one writing). */
  sendAll(msg: ToWorker): void {
    for (const s of this.slots) this.send(s, msg);
  }

  /** Sends `msg` to every worker that is listening. */
  broadcast(msg: ToWorker): void {
    for (const s of this.live()) this.send(s, msg);
  }

  /** Live workers: those that listen and will take a generation. */
  live(): WorkerSlot[] {
    return this.slots.filter((s) => s.worker && s.state === 'listening');
  }

  /** Workers that answer on the data port: listening, or draining the connections they hold. */
  answering(): WorkerSlot[] {
    return this.slots.filter((s) => s.worker && (s.state === 'listening' || s.state === 'draining'));
  }

  send(slot: WorkerSlot, msg: ToWorker): void {
    if (slot.worker) this.post(slot.worker, msg);
  }

  /** Sends unless the channel is gone; a failure is logged, never thrown or emitted unheard. */
  private post(worker: Worker, msg: ToWorker): void {
    if (!worker.isConnected()) return;
    worker.send(msg, (err: Error | null) => {
      if (err) this.opts.log.warn({ pid: worker.process.pid, type: msg.type, err }, 'message to a worker lost');
    });
  }

  onWorkerMessage(fn: (slot: number, msg: FromWorker) => void): () => void {
    this.ackWaiters.add(fn);
    return () => this.ackWaiters.delete(fn);
  }

  /** Told whenever a worker's state or acknowledged generation changes (readiness follows it). */
  onChange(fn: () => void): void {
    this.changeWatchers.add(fn);
  }

  private changed(): void {
    for (const fn of this.changeWatchers) fn();
  }

  status(): WorkerStatus[] {
    return this.slots.map((s) => ({
      slot: s.slot,
      pid: s.worker?.process.pid ?? null,
      state: s.state,
      generation: s.generation,
      restarts: s.restarts,
      startedAt: s.startedAt ? new Date(s.startedAt).toISOString() : null,
    }));
  }

  /** Drains every worker (stop accepting, finish in-flight), killing stragglers after the grace period. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    const draining = this.slots.filter((s) => s.worker).map((s) => ({ s, w: s.worker!, starting: s.state === 'starting' }));
    for (const { s } of draining) s.state = 'draining';
    // Readiness hears of it before any worker gets its drain message (the same IPC channel,
    // in order), so keep-alive probes of the data path read 503 while the drain runs.
    this.changed();
    const exits = draining.map(
      ({ w, starting }) =>
        new Promise<void>((resolve) => {
          if (w.isDead()) return resolve();
          w.once('exit', () => resolve());
          // Not listening yet: nothing in flight, and it may not take a drain message yet.
          if (starting || !w.isConnected()) return void w.process.kill('SIGKILL');
          const kill = setTimeout(() => w.process.kill('SIGKILL'), graceMs + 1000);
          kill.unref();
          this.post(w, { type: 'drain', graceMs });
        }),
    );
    await Promise.all(exits);
  }
}
