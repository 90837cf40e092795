import cluster, { type Worker } from 'node:cluster';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { DataPlaneSettings, FromWorker, GenerationMessage, HealthTable, ToWorker } from '../contracts/ipc.js';
import type { KeySetEntry } from '../contracts/key-sets.js';
import type { DiscoverySet } from '../contracts/discovery.js';
import type { Logger } from '../shared/logger.js';
import { RespawnBackoff } from './respawn-backoff.js';
import type { WorkerStatus } from '../contracts/node-status.js';
import type { WorkerPoolView } from '../admin/services.js';
import { WorkerReplacement } from './worker-replacement.js';
import type { ForkHooks, Replaced, ReplaceHow, Retiring, WorkerSlot } from './worker-slot.js';


/**
 * V8 flags every worker runs with. Without `--no-allocation-site-pretenuring`, V8 may move a
 * per-request allocation site to the old generation after a full collection, and what those
 * dead objects point to then survives every young collection; a traced worker can stay in
 * that costly state for the rest of its life.
 */
export const WORKER_V8_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring'];


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
  /** The key sets a (re)spawned worker starts with (supervisor/key-sets/). */
  currentKeySets?: () => KeySetEntry[];
  /** The `{dns}` targets' addresses a (re)spawned worker starts with (supervisor/discovery/). */
  currentDiscovery?: () => DiscoverySet[];
}

export class BindError extends Error {}

const WORKER_ENTRY = fileURLToPath(new URL('../worker/main.js', import.meta.url));

/**
 * Forks the data-plane workers, respawns the ones that die (with backoff when they
 * keep dying), replaces one on demand (the replacement listening before the old one
 * goes), and fans messages out. Workers listen on the data port themselves
 * (SO_REUSEPORT); the kernel spreads connections.
 */
export class WorkerPool implements WorkerPoolView {
  readonly slots: WorkerSlot[] = [];
  private stopping = false;
  private readonly ackWaiters = new Set<(slot: number, msg: FromWorker, from: Worker) => void>();
  private readonly changeWatchers = new Set<() => void>();
  private readonly reportWatchers = new Set<(slot: number, line: string, from: Worker) => void>();
  private readonly replacement: WorkerReplacement;

  constructor(private readonly opts: PoolOptions) {
    // SWITCHYARD_WORKER_NODE_ARGS: extra node flags for workers only, for profiling
    // (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"; node refuses those in NODE_OPTIONS).
    const extra = process.env.SWITCHYARD_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    // Where the node engine shares this process's socket (Node before 22.12: no SO_REUSEPORT),
    // the workers accept from it themselves: node's round-robin hands a connection to a worker
    // and holds it forever when that worker is killed before it took it (a client waited 3 s and
    // more at every kill -9 under load, test/worker-kill-under-load.test.ts).
    cluster.schedulingPolicy = cluster.SCHED_NONE;
    // fd 4: the worker's report pipe. Its watchdog thread writes there when the main thread is
    // blocked and cannot use IPC (stall-watchdog.ts).
    const stdio = ['inherit', 'inherit', 'inherit', 'ipc', 'pipe'];
    cluster.setupPrimary({ exec: WORKER_ENTRY, stdio, execArgv: [...process.execArgv, ...WORKER_V8_FLAGS, ...extra] });
    this.replacement = new WorkerReplacement({
      log: opts.log,
      graceMs: opts.graceMs,
      stopping: () => this.stopping,
      fork: (slot, role, hooks) => this.fork(slot, role, hooks),
      post: (worker, msg) => this.post(worker, msg),
      changed: () => this.changed(),
      respawn: (slot, livedMs, why) => this.respawn(slot, livedMs, why),
    });
  }

  /** Forks every worker; resolves once all listen, rejects with BindError if any cannot bind. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      let listening = 0;
      for (let i = 0; i < this.opts.count; i++) {
        const slot: WorkerSlot = { slot: i, worker: null, state: 'starting', generation: 0, restarts: 0, startedAt: 0, backoff: new RespawnBackoff(), next: null, standby: null, retiring: [] };
        this.slots.push(slot);
        this.fork(slot, 'own', {
          onFirstListen: (err) => {
            if (err) return reject(err);
            if (++listening === this.opts.count) resolve();
          },
        });
      }
    });
  }

  /**
   * Replaces the slot's worker: a new process (its standby, if a suspected stall booted one)
   * starts beside it and, once it listens with the current generation, takes the slot; the
   * old one is then drained or killed (`how`), and its exit respawns nothing. A replacement
   * that cannot start leaves the old one serving, and the promise rejects with why.
   */
  replace(slotNo: number, how: ReplaceHow): Promise<Replaced> {
    const slot = this.slots[slotNo];
    if (!slot) return Promise.reject(new Error(`no worker slot ${slotNo}`));
    return this.replacement.replace(slot, how);
  }

  /** The slot's worker reported its loop blocked for a while (`stall-suspect`): boot a standby replacement. */
  suspectStall(slotNo: number, from: Worker, blockedMs: number): void {
    const slot = this.slots[slotNo];
    if (slot) this.replacement.suspect(slot, from, blockedMs);
  }

  /** The slot's worker reported its loop back before the bound (`stall-cleared`): drop its standby. */
  stallCleared(slotNo: number, from: Worker, blockedMs: number): void {
    const slot = this.slots[slotNo];
    if (slot) this.replacement.cleared(slot, from, blockedMs);
  }

  /**
   * Forks a worker for `slot`: its own (start, respawn), a replacement kept in `slot.next`
   * until it listens, or a standby kept in `slot.standby` and given init only when promoted
   * (worker-replacement.ts). `hooks.onFirstListen` hears the first listen (with the worker it
   * took the slot from, for a replacement) or why it never came.
   */
  private fork(slot: WorkerSlot, role: 'own' | 'replacing' | 'standby', hooks: ForkHooks = {}): Worker {
    // uWS reads its head-size limit from the environment once, when the worker loads it.
    const worker = cluster.fork({ SWITCHYARD_WORKER_SLOT: String(slot.slot), UWS_HTTP_MAX_HEADERS_SIZE: String(this.opts.dataPlane.limits.maxHeadBytes) });
    const startedAt = Date.now();
    let generation = 0;
    if (role === 'replacing') slot.next = worker;
    else if (role === 'standby') slot.standby = { worker, hooks, start: null };
    else {
      slot.worker = worker;
      slot.state = 'starting';
      slot.startedAt = startedAt;
    }
    const firstListen = (err?: Error, old?: Retiring): void => {
      const fn = hooks.onFirstListen;
      hooks.onFirstListen = undefined;
      fn?.(err, old);
    };
    this.changed();
    this.readReports(slot, worker);
    // A worker's IPC pipe closes a few milliseconds before its exit event: a send in that
    // window fails. The exit handler respawns it; the failure must not end the supervisor.
    worker.on('error', (err) => this.opts.log.warn({ slot: slot.slot, err }, 'worker IPC failed'));
    worker.on('message', (msg: FromWorker) => {
      if (msg.type === 'booted') {
        if (this.stopping) {
          worker.process.kill('SIGKILL'); // started while the node stops: it must never listen
          return;
        }
        const start = (): void => {
          // The generation of when it is told to listen: a standby may have waited through a publish.
          const gen = this.opts.currentGeneration();
          generation = gen?.id ?? 0;
          if (slot.worker === worker) slot.generation = generation;
          const init: ToWorker = { type: 'init', slot: slot.slot, listen: this.opts.listen, generation: gen, logLevel: this.opts.logLevel, graceMs: this.opts.graceMs, dataPlane: this.opts.dataPlane, keySets: this.opts.currentKeySets?.() ?? [], discovery: this.opts.currentDiscovery?.() ?? [] };
          this.post(worker, init);
          this.post(worker, { type: 'health', unhealthy: this.opts.currentHealth() });
        };
        // A standby waits, booted, until a stall promotes it (or is dropped).
        if (slot.standby?.worker === worker) slot.standby.start = start;
        else start();
      } else if (msg.type === 'listening') {
        let old: Retiring | undefined;
        if (slot.next === worker) {
          // The replacement takes the slot; the worker it replaces leaves it (the caller retires it).
          if (slot.worker) old = { worker: slot.worker, generation: slot.generation, startedAt: slot.startedAt };
          slot.next = null;
          slot.worker = worker;
          slot.startedAt = startedAt;
        }
        slot.state = 'listening';
        slot.generation = generation;
        // A publish that ran while this worker started skipped it: catch it up.
        const cur = this.opts.currentGeneration();
        if (cur && cur.id !== generation) this.post(worker, { type: 'generation', generation: cur });
        this.changed();
        firstListen(undefined, old);
      } else if (msg.type === 'listen-failed') {
        firstListen(new BindError(msg.error.message));
      } else {
        if (msg.type === 'ack') {
          generation = msg.generation;
          if (slot.worker === worker) slot.generation = msg.generation;
        }
        for (const w of this.ackWaiters) w(slot.slot, msg, worker);
        if (msg.type === 'ack') this.changed();
      }
    });
    worker.on('exit', (code, signal) => {
      if (slot.standby?.worker === worker) return this.replacement.standbyExited(slot, code, signal);
      if (slot.next === worker) return this.replacement.replacementExited(slot, code, signal, firstListen);
      if (slot.worker !== worker) return;
      slot.state = 'exited';
      slot.worker = null;
      this.changed();
      if (this.stopping || hooks.onFirstListen) return firstListen(new Error(`worker ${slot.slot} exited during startup (code ${code}, signal ${signal})`));
      const why = { pid: worker.process.pid, code, signal };
      // A standby booted for a suspected stall takes the slot as the respawn would, without the boot.
      if (this.replacement.respawnFromStandby(slot)) return void this.opts.log.warn({ slot: slot.slot, ...why }, 'worker exited; its standby replacement takes the slot');
      // A replacement already starting takes the slot when it listens.
      if (slot.next) return void this.opts.log.warn({ slot: slot.slot, ...why }, 'worker exited; its replacement is starting');
      this.respawn(slot, Date.now() - slot.startedAt, why);
    });
    return worker;
  }

  private respawn(slot: WorkerSlot, livedMs: number, why: Record<string, unknown>): void {
    const delay = slot.backoff.next(livedMs);
    this.opts.log.warn({ slot: slot.slot, ...why, respawnInMs: delay }, 'worker exited; respawning');
    setTimeout(() => {
      if (this.stopping || slot.worker || slot.next) return;
      slot.restarts++;
      this.fork(slot, 'own');
    }, delay).unref();
  }

  /** JSON lines on a worker's report pipe (fd 4) go to the report watchers. */
  private readReports(slot: WorkerSlot, worker: Worker): void {
    const pipe = worker.process.stdio[4] as Readable | null | undefined;
    if (!pipe) return;
    let buffered = '';
    pipe.setEncoding('utf8');
    pipe.on('error', () => {}); // a pipe of a killed worker: its exit is handled elsewhere
    pipe.on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        for (const w of this.reportWatchers) w(slot.slot, line, worker);
      }
      if (buffered.length > 65_536) buffered = ''; // not ours to keep: a line never gets that long
    });
  }

  /** Sends `msg` to every worker that has a process: starting, listening or draining (a reopen reaches each one writing). */
  sendAll(msg: ToWorker): void {
    for (const s of this.slots) {
      this.send(s, msg);
      if (s.next) this.post(s.next, msg);
      for (const r of s.retiring) this.post(r.worker, msg);
    }
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

  /** Sends to one process (an answer to what it asked: a replaced worker still draining asks too). */
  sendTo(worker: Worker, msg: ToWorker): void {
    this.post(worker, msg);
  }

  /** Sends unless the channel is gone; a failure is logged, never thrown or emitted unheard. */
  private post(worker: Worker, msg: ToWorker): void {
    if (!worker.isConnected()) return;
    worker.send(msg, (err: Error | null) => {
      if (err) this.opts.log.warn({ pid: worker.process.pid, type: msg.type, err }, 'message to a worker lost');
    });
  }

  /** Every message of every worker process; `from` tells a slot's worker from its replacement or a replaced one. */
  onWorkerMessage(fn: (slot: number, msg: FromWorker, from: Worker) => void): () => void {
    this.ackWaiters.add(fn);
    return () => this.ackWaiters.delete(fn);
  }

  /** Each line a worker writes on its report pipe (its watchdog's stall reports). */
  onWorkerReport(fn: (slot: number, line: string, from: Worker) => void): void {
    this.reportWatchers.add(fn);
  }

  /** Told whenever a worker's state or acknowledged generation changes (readiness follows it). */
  onChange(fn: () => void): void {
    this.changeWatchers.add(fn);
  }

  private changed(): void {
    for (const fn of this.changeWatchers) fn();
  }

  /** One row per slot, then a row per process beside it: its replacement starting (or standby), the replaced ones leaving (`draining`). */
  status(): WorkerStatus[] {
    const at = (t: number) => (t ? new Date(t).toISOString() : null);
    return this.slots.flatMap((s): WorkerStatus[] => [
      { slot: s.slot, pid: s.worker?.process.pid ?? null, state: s.state, generation: s.generation, restarts: s.restarts, startedAt: at(s.startedAt) },
      ...(s.next ? [{ slot: s.slot, pid: s.next.process.pid ?? null, state: 'starting' as const, generation: 0, restarts: s.restarts, startedAt: null, replacing: true as const }] : []),
      ...(s.standby ? [{ slot: s.slot, pid: s.standby.worker.process.pid ?? null, state: 'starting' as const, generation: 0, restarts: s.restarts, startedAt: null, standby: true as const }] : []),
      ...s.retiring.map((r) => ({ slot: s.slot, pid: r.worker.process.pid ?? null, state: 'draining' as const, generation: r.generation, restarts: s.restarts, startedAt: at(r.startedAt), replaced: true as const })),
    ]);
  }

  /** Drains every worker (stop accepting, finish in-flight), killing stragglers after the grace period. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    const draining = this.slots.filter((s) => s.worker).map((s) => ({ s, w: s.worker!, starting: s.state === 'starting' }));
    for (const { s } of draining) s.state = 'draining';
    // A replacement not yet listening (or a standby) goes at once; replaced workers already draining are waited for.
    const besides = this.slots.flatMap((s) => [
      ...(s.next ? [{ w: s.next, starting: true }] : []),
      ...(s.standby ? [{ w: s.standby.worker, starting: true }] : []),
      ...s.retiring.map((r) => ({ w: r.worker, starting: false })),
    ]);
    // Readiness hears of it before any worker gets its drain message (the same IPC channel,
    // in order), so keep-alive probes of the data path read 503 while the drain runs.
    this.changed();
    const exits = [...draining, ...besides].map(
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
