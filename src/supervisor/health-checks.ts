import type { CompiledGeneration } from '../contracts/generation.js';
import type { HealthTable } from '../contracts/ipc.js';
import type { Logger } from '../shared/logger.js';
import { HealthProber } from './health-prober.js';
import type { ProbedTarget, TargetHealth } from '../contracts/node-status.js';
import type { HealthView } from '../admin/services.js';
import type { UpstreamGuard } from '../shared/upstream-guard.js';

/** Targets one tenant may have probed at once: a tenant's config cannot turn the supervisor into a prober of thousands. */
export const PROBES_PER_TENANT = 256;

/**
 * The node's active health checks: one prober per target of every cluster that has a
 * `healthCheck`, run here in the supervisor, never once per worker, and the verdicts sent to
 * every worker as one small table (clusters to their unhealthy targets) whenever a state
 * changes. A publish that keeps a cluster's target keeps its prober and its state.
 */
export class HealthChecks implements HealthView {
  private readonly probers = new Map<string, HealthProber>();

  constructor(
    private readonly log: Logger,
    /** A verdict changed: the supervisor sends the table to every live worker. */
    private readonly broadcast: () => void,
    /** Probes reach only what the tenant's clusters may (worker.json `upstreams`). */
    private readonly guard: UpstreamGuard,
  ) {}

  /** Starts, retunes and stops probers to match the published generation. */
  update(gen: CompiledGeneration | null): void {
    const wanted = new Set<string>();
    const perTenant = new Map<string, number>();
    let changed = false;
    for (const [clusterKey, c] of Object.entries(gen?.clusters ?? {})) {
      if (!c.healthCheck) continue;
      const tenant = clusterKey.slice(0, clusterKey.indexOf('/'));
      for (const target of new Set(c.targets)) {
        const count = (perTenant.get(tenant) ?? 0) + 1;
        perTenant.set(tenant, count);
        if (count > PROBES_PER_TENANT) {
          if (count === PROBES_PER_TENANT + 1) this.log.warn({ tenant, limit: PROBES_PER_TENANT }, 'health checks: the tenant has more targets to probe than allowed; the rest are not checked');
          continue;
        }
        const key = `${clusterKey}|${target}`;
        wanted.add(key);
        const have = this.probers.get(key);
        if (have) {
          if (JSON.stringify([have.check, have.tls, have.protocol]) !== JSON.stringify([c.healthCheck, c.tls, c.protocol])) have.retune(c.healthCheck, c.tls, c.protocol);
          continue;
        }
        const p = new HealthProber(tenant, target, c.healthCheck, c.tls, (prober, from, why) => this.changed(clusterKey, prober, from, why), this.guard, c.protocol);
        this.probers.set(key, p);
        if (p.state === 'unhealthy') changed = true;
        p.start();
      }
    }
    for (const [key, p] of this.probers) {
      if (wanted.has(key)) continue;
      p.stop();
      this.probers.delete(key);
      if (p.state === 'unhealthy') changed = true;
    }
    if (changed) this.broadcast();
  }

  /** Clusters to the targets out of rotation (what a new worker gets at start). */
  table(): HealthTable {
    const t: HealthTable = {};
    for (const [key, p] of this.probers) {
      if (p.state !== 'unhealthy') continue;
      const cluster = key.slice(0, key.lastIndexOf('|'));
      (t[cluster] ??= []).push(p.target);
    }
    return t;
  }

  /** Each target of `clusterKey` with its state and counters (the health endpoint). */
  targets(clusterKey: string): ProbedTarget[] {
    return [...this.probers.entries()]
      .filter(([key]) => key.slice(0, key.lastIndexOf('|')) === clusterKey)
      .map(([, p]) => ({ target: p.target, state: p.state, successes: p.successes, failures: p.failures, lastCheckedAt: p.lastCheckedAt === null ? null : new Date(p.lastCheckedAt).toISOString() }));
  }

  /** Every probed target with its state. */
  states(): { cluster: string; target: string; state: TargetHealth }[] {
    return [...this.probers.entries()].map(([key, p]) => ({ cluster: key.slice(0, key.lastIndexOf('|')), target: p.target, state: p.state }));
  }

  stop(): void {
    for (const p of this.probers.values()) p.stop();
    this.probers.clear();
  }

  private changed(cluster: string, p: HealthProber, from: TargetHealth, why: string): void {
    const line = { cluster, target: p.target, from, to: p.state, why };
    if (p.state === 'unhealthy') this.log.warn(line, 'upstream target unhealthy: out of rotation');
    else this.log.info(line, 'upstream target healthy: back in rotation');
    this.broadcast();
  }
}

/** Targets out of rotation by either verdict: unhealthy by the checks, or ejected. */
export function mergeTables(a: HealthTable, b: HealthTable): HealthTable {
  const out: HealthTable = { ...a };
  for (const [cluster, targets] of Object.entries(b)) out[cluster] = [...new Set([...(out[cluster] ?? []), ...targets])];
  return out;
}
