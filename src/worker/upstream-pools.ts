import type { DataMetrics } from './observe/data-metrics.js';
import type { UpstreamMeter } from './observe/meters.js';
import { failureKind } from './upstream-failure.js';
import type { CompiledCluster } from '../contracts/generation.js';
import { targetUpstream, type TargetUpstream } from './target-upstream.js';
import type { Upstream } from '../contracts/upstream.js';
import { targetConnection } from '../shared/upstream-connect.js';
import type { Logger } from '../shared/logger.js';
import { TlsFailureLog } from './tls-failure-log.js';
import type { UpstreamTlsError } from '../shared/upstream-tls.js';
import { targetChoice, type TargetChoice } from '../shared/balance/target-choice.js';
import { hashKey, type KeySource } from '../shared/balance/hash-key.js';
import type { TargetHealth } from './target-health.js';
import type { ConnectVerdict, UpstreamGuard } from '../shared/upstream-guard.js';
import { clusterRetry, type RetryPolicy } from './retry-policy.js';
import { expandCluster, type DiscoveredSets } from '../shared/discovery-targets.js';
import { holdOffDown, priorityDown } from '../shared/balance/priority-tiers.js';
import { NO_TARGETS } from './no-targets.js';
import { closeWhenDrained } from './pool-drain.js';
import { carried, carriedIndex, removedIndexes, sameTargets } from './pool-retarget.js';

/** What every generation's pools in one worker share (its WorkerContext holds them). */
export interface PoolsContext {
  /** worker.json `upstreams`: the policy every connection passes. */
  readonly upstreamGuard: UpstreamGuard;
  /** The health checks' and outlier ejection's verdicts, as the supervisor last sent them. */
  readonly targetHealth: TargetHealth;
  /** A target's failures in a row reached another multiple of consecutiveFailures: the supervisor decides node-wide. */
  reportOutlier(cluster: string, target: string): void;
  /** The addresses the supervisor resolved for `{dns}` targets (worker-discovery.ts); its version moves with targetHealth's. */
  readonly discovery: { readonly version: number; readonly get: DiscoveredSets };
}

/** How long a worker passes over a target it could not connect to. */
export const HOLD_OFF_MS = 1_000;

/**
 * Keep-alive connections to one cluster's targets (HTTP/1.1, or HTTP/2 for an h2/h2c
 * cluster: target-upstream.ts), balanced as the cluster says (round
 * robin, weighted, least-request or rendezvous hashing: shared/balance/). Built once per generation; closed (gracefully, after their requests finish) when the generation
 * that built them retires and goes idle.
 *
 * A target this worker could not connect to (refused, timed out: any caller, the proxy
 * or `mirror`) is held off for HOLD_OFF_MS: pick() passes over it unless every target is
 * held off. After that it is tried again by the next request that picks it. With SRV
 * priorities a held-off target counts as out, so its group hands over to the next.
 *
 * A cluster with `{dns}` targets has the addresses the supervisor resolved as targets
 * (shared/discovery-targets.ts); when they change, the next pick rebuilds the lists: an
 * address kept keeps its connections, a removed one's pool closes once its requests end.
 * Before any address is known (and with no fixed target) a request is answered 503
 * Svc.Data.NoTargets.
 */
export class ClusterPools {
  /** The cluster with its `{dns}` targets expanded (as compiled when it has none). */
  spec: CompiledCluster;
  private pools: TargetUpstream[] = [];
  /** Per target: until when (Date.now()) it is held off; 0 when it is not. */
  private heldUntil: number[] = [];
  private next = 0;
  /** null: plain round robin, the hot path below. */
  private choice: TargetChoice | null = null;
  private readonly usable = (i: number): boolean => !this.down[i] && this.heldUntil[i]! <= Date.now();

  /** The health checks' verdict per target (all false without checks), refreshed when the worker's TargetHealth moves. */
  private down: boolean[] = [];
  /** The verdicts `down` was made from, before the panic rule (empty: none yet): which targets come back. */
  private verdicts: boolean[] = [];
  private anyDown = false;
  private healthVersion = -1;
  /** With SRV priorities: when the first hold-off counted in the groups ends (0: none), and they are worked out again. */
  private tiersUntil = 0;
  /** Per target: requests that failed in a row in this worker (outlier detection). */
  private failures: number[] = [];
  private indexOf = new Map<Upstream, number>();
  /** Per target, its time-to-first-byte and error counters (null: metrics off). */
  private meters: UpstreamMeter[] | null = null;
  /** The cluster's retry policy and budget (null without `retry`). */
  readonly retryPolicy: RetryPolicy | null;
  /** The discovery version the targets were expanded at (-1: the cluster has no `{dns}` target). */
  private discoveryVersion = -1;
  private readonly tenant: string;
  private readonly tlsLog: TlsFailureLog | null;

  /** `key`: the cluster's `tenant/name`, whose tenant's upstream policy the connections are checked against. */
  constructor(
    /** The cluster as compiled. */
    private readonly compiled: CompiledCluster,
    private readonly key: string,
    private readonly shared: PoolsContext,
    private readonly log?: Logger,
    /** The worker's counters (null: metrics off). */
    private readonly metrics?: DataMetrics | null,
  ) {
    this.tenant = key.slice(0, key.indexOf('/'));
    this.tlsLog = log ? new TlsFailureLog(log, key) : null;
    if (compiled.discover) this.discoveryVersion = shared.discovery.version;
    this.spec = expandCluster(compiled, shared.discovery.get);
    this.build();
    this.retryPolicy = clusterRetry(compiled);
  }

  /**
   * The per-target lists for `this.spec`'s targets. `from`/`prev` (a DNS change): target i
   * was prev's `from[i]` (-1: new); one that stays keeps its pool, hold-off, failures and
   * balancer score.
   */
  private build(from: readonly number[] | null = null, prev: { pools: TargetUpstream[]; heldUntil: number[]; failures: number[]; verdicts: boolean[]; choice: TargetChoice | null } | null = null): void {
    const spec = this.spec;
    const metrics = this.metrics;
    this.meters = metrics ? spec.targets.map((t) => metrics.upstream(this.key, t)) : null;
    this.down = spec.targets.map(() => false);
    this.anyDown = false;
    const keep = from !== null && prev !== null;
    this.failures = keep ? carried(prev.failures, from, 0) : spec.targets.map(() => 0);
    this.heldUntil = keep ? carried(prev.heldUntil, from, 0) : spec.targets.map(() => 0);
    this.verdicts = keep ? carried(prev.verdicts, from, false) : [];
    this.pools = spec.targets.map((t, i) => (keep && from[i]! >= 0 ? prev.pools[from[i]!]! : this.connect(t)));
    this.choice = spec.targets.length === 0 ? null : targetChoice(spec, (i) => this.pools[i]!.busy);
    if (keep && prev.choice && this.choice) this.choice.carry?.(prev.choice, from);
    this.indexOf = new Map(this.pools.map((p, i) => [p, i]));
    this.next = 0;
    this.healthVersion = -1;
  }

  private connect(t: string): TargetUpstream {
    const tlsLog = this.tlsLog;
    // A failed TLS handshake is a connect failure (hold-off, failover) that is also logged.
    const tlsFailed = tlsLog ? (err: UpstreamTlsError) => tlsLog.failed(err) : undefined;
    const c = targetConnection(this.shared.upstreamGuard, this.tenant, t, this.spec, tlsFailed);
    if (c.missingEnv.length) this.log?.error({ cluster: this.key, target: t, missing: c.missingEnv }, 'upstream TLS: client certificate variables unset; connecting without a client certificate');
    // By name, not index: the index of a discovered target moves when the addresses change.
    const holdOff = () => {
      const i = this.spec.targets.indexOf(t);
      if (i < 0) return;
      this.heldUntil[i] = Date.now() + HOLD_OFF_MS;
      if (this.spec.priorities) this.healthVersion = -1; // the priority groups are worked out again, this target out
    };
    return targetUpstream(this.spec, t, c, holdOff, tlsFailed);
  }

  /** The discovered addresses changed: targets kept keep their pools and state (pool-retarget.ts); a removed one's pool closes when its requests end. */
  private retarget(): void {
    this.discoveryVersion = this.shared.discovery.version;
    const next = expandCluster(this.compiled, this.shared.discovery.get);
    if (sameTargets(next, this.spec)) return;
    const from = carriedIndex(this.spec.targets, next.targets);
    const prev = { pools: this.pools, heldUntil: this.heldUntil, failures: this.failures, verdicts: this.verdicts, choice: this.choice };
    for (const j of removedIndexes(prev.pools.length, from)) closeWhenDrained(prev.pools[j]!);
    this.spec = next;
    this.build(from, prev);
  }

  /** The cluster's targets, more than one: a failed attempt may go to another. */
  get size(): number {
    return this.pools.length;
  }

  /** A target for a request (`req` gives a hash cluster its key; without it, or without a key, round robin). */
  pick(req?: KeySource): Upstream {
    if (this.healthVersion !== this.shared.targetHealth.version || (this.tiersUntil !== 0 && this.tiersUntil <= Date.now())) this.refreshHealth();
    if (this.choice) return this.chosen(req);
    const i = this.advance();
    // The hot path: nothing held off or down costs two reads.
    return this.heldUntil[i] === 0 && !this.anyDown ? this.pools[i]! : this.pickAround(i);
  }

  /**
   * An attempt's outcome on `target` (outlier detection): connect failures and resets, and
   * 5xx answers unless the cluster says not, count as failures; every consecutiveFailures
   * of them in a row are reported to the supervisor, which decides the ejection.
   */
  outcome(target: Upstream, status: number | null): void {
    const o = this.spec.outlier;
    if (!o) return;
    const i = this.indexOf.get(target);
    if (i === undefined) return;
    if (status === null || (o.on5xx && status >= 500)) {
      if (++this.failures[i]! % o.consecutiveFailures === 0) this.shared.reportOutlier(this.key, this.spec.targets[i]!);
    } else this.failures[i] = 0;
  }

  /** An attempt on `target` got its answer's head after `ms`. */
  answered(target: Upstream, ms: number, status: number): void {
    // No meter: an address a DNS name no longer gives.
    if (this.meters !== null) this.meters[this.indexOf.get(target) ?? -1]?.answered(ms, status);
  }

  /** An attempt on `target` failed before any answer. */
  failed(target: Upstream, err: Error): void {
    if (this.meters !== null) this.meters[this.indexOf.get(target) ?? -1]?.failed(failureKind(err));
  }

  /**
   * The checks' verdicts for this cluster. When they take every target out, none is down
   * here: traffic goes to all of them rather than to none (panic, as Envoy does).
   */
  private refreshHealth(): void {
    if (this.discoveryVersion !== -1 && this.discoveryVersion !== this.shared.discovery.version) this.retarget();
    const health = this.shared.targetHealth;
    this.healthVersion = health.version;
    this.tiersUntil = 0;
    if (!this.spec.healthCheck && !this.spec.outlier && !this.spec.priorities) return;
    // SRV priorities: the groups behind the first one with a target in rotation (not held off either) are down too.
    const verdicts = health.down(this.key, this.spec.targets);
    if (this.spec.priorities) this.tiersUntil = holdOffDown(verdicts, this.heldUntil, Date.now());
    const down = priorityDown(verdicts, this.spec.priorities);
    // A target back in rotation starts counting its failures anew (the others keep their count: a hold-off also lands here).
    const was = this.verdicts;
    down.forEach((d, i) => {
      if (!d && was[i] !== false) this.failures[i] = 0;
    });
    this.verdicts = down;
    const all = down.every(Boolean);
    this.down = all ? down.map(() => false) : down;
    this.anyDown = !all && down.some(Boolean);
  }

  /** A target other than `failed` (the cluster has two at least), one not held off if there is one. */
  pickOther(failed: Upstream): Upstream {
    const now = Date.now();
    let held: TargetUpstream | null = null;
    for (let k = 0; k < this.pools.length; k++) {
      const i = this.advance();
      const p = this.pools[i]!;
      if (p === failed) continue;
      if (this.heldUntil[i]! <= now && !this.down[i]) return p;
      held ??= p;
    }
    return held ?? failed;
  }

  private chosen(req: KeySource | undefined): Upstream {
    const on = this.spec.hashOn;
    const i = this.choice!.choose(on && req ? hashKey(on, req) : null, this.usable);
    if (this.heldUntil[i]! !== 0 && this.heldUntil[i]! <= Date.now()) this.heldUntil[i] = 0;
    return this.pools[i]!;
  }

  /** The `host:port` of a target pick() gave (the WebSocket relay connects to it with its own client). */
  addressOf(target: Upstream): string {
    return this.spec.targets[this.indexOf.get(target) ?? 0] ?? '';
  }

  /** The upstream policy's verdict on `hostPort` for this cluster's tenant (a client other than undici's: the WebSocket relay's). */
  connectVerdict(hostPort: string): ConnectVerdict {
    return this.shared.upstreamGuard.check(this.key.slice(0, this.key.indexOf('/')), hostPort);
  }

  /** Per target address, requests in flight or waiting for one of this worker's connections. */
  inFlight(): Record<string, number> {
    return Object.fromEntries(this.spec.targets.map((t, i) => [t, this.pools[i]!.busy]));
  }

  close(): Promise<void> {
    this.discoveryVersion = -1; // a retired generation's pools do not rebuild
    return Promise.all(this.pools.map((p) => p.close().catch(() => undefined))).then(() => undefined);
  }

  private advance(): number {
    const i = this.next;
    this.next = i + 1 === this.pools.length ? 0 : i + 1;
    return i;
  }

  /** `first` is held off or down: the next target round the ring that is neither; if all are, `first`. */
  private pickAround(first: number): TargetUpstream {
    if (this.pools.length === 0) return NO_TARGETS; // a DNS cluster before its first addresses (no choice then: round robin lands here)
    const now = Date.now();
    for (let k = 0, i = first; k < this.pools.length; k++, i = this.advance()) {
      if (this.heldUntil[i]! <= now && !this.down[i]) {
        this.heldUntil[i] = 0;
        return this.pools[i]!;
      }
    }
    return this.pools[first]!;
  }
}
