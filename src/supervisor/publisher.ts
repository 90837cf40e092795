import type { CompiledGeneration } from '../contracts/generation.js';
import { compile } from '../compiler/compile.js';
import { BUILTINS } from '../steps/registry.js';
import type { StepRegistry } from '../steps/step-registry.js';
import { TenantPartCache } from '../compiler/tenant-parts.js';
import { takeoverWarnings } from '../compiler/takeover-warnings.js';
import type { DraftRow, EntityRow } from '../contracts/entities.js';
import type { CompileIssue } from '../contracts/generation.js';
import type { SecretPolicy } from '../contracts/secrets.js';
import type { EntityRepo } from '../store/entity-repo.js';
import type { GenerationRepo } from '../store/generation-repo.js';
import type { PluginRepo } from '../store/plugin-repo.js';
import type { Db } from '../store/volume.js';
import type { FleetHooks } from '../contracts/store-db.js';
import type { GenerationMessage } from '../contracts/ipc.js';
import { SvcError, rejectedMessage } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { UpstreamRules } from '../shared/upstream-policy.js';
import { broadcastGeneration } from './broadcast.js';
import { publishLocked } from './publish-lock.js';
import type { WorkerPool } from './worker-pool.js';
import type { DryRunResult, PublishResult } from '../contracts/publish-results.js';
import type { PublisherView } from '../admin/services.js';

/**
 * Publish, dry-run and rollback. One publish at a time (they queue), so generation
 * numbers are dense and each compiles against the state the previous one left. The
 * generation is committed in one transaction with the entity changes, then sent to
 * every worker; the answer waits for every ack.
 */
export class Publisher implements PublisherView {
  private queue: Promise<unknown> = Promise.resolve();
  private served: GenerationMessage | null = null;
  /** A publish recompiles only the tenants whose entities changed. */
  private readonly parts = new TenantPartCache();

  constructor(
    private readonly db: Db,
    private readonly entities: EntityRepo,
    private readonly generations: GenerationRepo,
    private readonly plugins: PluginRepo,
    private readonly pool: () => WorkerPool,
    private readonly log: Logger,
    /** The environment variables each tenant's steps may name (worker.json secrets.env). */
    private readonly secrets: SecretPolicy,
    /** worker.json's upstream policy, which the compiler checks targets against. */
    private readonly upstreams: UpstreamRules | undefined,
    private readonly ackTimeoutMs = 10_000,
  ) {}

  /** Reads the generation to serve at start (the last one stored; null before the first publish). */
  async load(): Promise<void> {
    this.served = await this.generations.latest();
  }

  /** How the publishing tenant's certificates are checked: its stored keys opened, and whether a TLS port listens. */
  tls: { openKey: (stored: string, context: string) => string; listening: boolean; clientCertificates: boolean } | null = null;

  /** The tenant's quotas against a restored state with its drafts over it (TenantQuotas.checkRestore), in the rollback's transaction. */
  restoreCheck: ((tenant: string, state: EntityRow[]) => Promise<void>) | null = null;

  /** Whether worker.json has `redis` (rate-limit scope cluster compiles only with it). */
  redis = false;

  /** The steps the compiler checks against and stamps builds from (the supervisor's registry). */
  steps: StepRegistry = BUILTINS;

  /** Several nodes on one store: publishes serialised across them and announced to them. */
  fleet: FleetHooks | null = null;

  /**
   * Whether a workers restart runs: a publish then is refused (409), since workers not yet
   * replaced may hold other step package builds than the ones it would be stamped with.
   */
  restarting: () => boolean = () => false;

  /** Told of each generation as it becomes the served one (the health checks follow it). */
  onServed: ((gen: GenerationMessage) => void) | null = null;

  /** What a (re)spawned worker must load before it listens. */
  current(): GenerationMessage | null {
    return this.served;
  }

  currentId(): number {
    return this.served?.id ?? 0;
  }

  async dryRun(tenant: string): Promise<DryRunResult> {
    const r = compile(await this.snapshot(tenant), this.parts, { steps: this.steps });
    // Which served traffic the plan moves: against the generation serving now, for the dry-run only.
    const moved = r.ok ? takeoverWarnings(this.served?.payload.tenants[tenant]?.routes ?? [], r.generation.tenants[tenant]?.routes ?? []) : [];
    return { success: r.ok, candidateGeneration: (await this.generations.current()) + 1, issues: r.issues, warnings: [...r.warnings, ...moved], planned: r.planned };
  }

  /** The generation the drafts would make, compiled and not stored (explain --draft); null with the issues that refuse it. */
  async candidate(tenant: string): Promise<{ generation: CompiledGeneration | null; issues: CompileIssue[] }> {
    const r = compile(await this.snapshot(tenant), this.parts, { steps: this.steps });
    return r.ok ? { generation: r.generation, issues: [] } : { generation: null, issues: r.issues };
  }

  /**
   * The dry-run of the drafts `apply` would write: applied, compiled and undone in one
   * transaction (a sync's dry-run with publish).
   */
  async tryApply(tenant: string, apply: () => Promise<void>): Promise<DryRunResult> {
    let result: DryRunResult | null = null;
    try {
      await this.db.transaction(async () => {
        await apply();
        result = await this.dryRun(tenant);
        throw UNDO;
      }, { tenant });
    } catch (err) {
      if (err !== UNDO) throw err;
    }
    return result!;
  }

  /**
   * `onCommit` runs inside the transaction that commits the change (the audit record goes
   * there). `apply` writes drafts (a sync) in the transaction of the compile that checks
   * them: a refused compile undoes them.
   */
  go(tenant: string, onCommit?: (generation: number) => Promise<void>, apply?: () => Promise<void>): Promise<PublishResult> {
    return this.serial(async () => {
      this.refuseWhileRestarting();
      // One transaction from the drafts to the generation row: on a shared store the fleet
      // lock makes the number, the state compiled and the commit one step across nodes.
      const r = await publishLocked(this.db, this.fleet, tenant, async () => {
        await apply?.();
        const candidate = (await this.generations.current()) + 1;
        const snapshot = await this.snapshot(tenant);
        const compiled = compile(snapshot, this.parts, { steps: this.steps });
        if (!compiled.ok) throw rejected(candidate, compiled.issues, compiled.planned);
        if (compiled.planned.length === 0) {
          await this.entities.replacePublished(tenant, compiled.entities, new Set(), 0, snapshot.drafts); // drop no-op drafts
          await onCommit?.(this.currentId());
          return { compiled, id: null };
        }
        await this.record(tenant, 'publish', candidate, compiled.generation, compiled.planned, compiled.entities, snapshot.drafts, onCommit);
        return { compiled, id: candidate };
      });
      if (r.id === null) return { ok: true as const, generation: this.currentId(), planned: [], warnings: r.compiled.warnings };
      return { ...(await this.serve(tenant, 'publish', r.id, r.compiled.generation, r.compiled.planned)), warnings: r.compiled.warnings };
    });
  }

  rollback(tenant: string, to: number, onCommit?: (generation: number) => Promise<void>): Promise<PublishResult> {
    return this.serial(async () => {
      this.refuseWhileRestarting();
      const r = await publishLocked(this.db, this.fleet, tenant, async () => {
        const state = await this.generations.tenantState(tenant, to);
        if (!state && (await this.generations.pruned(tenant, to))) {
          throw new SvcError('Svc.Publish.Pruned', `Generation ${to} is older than the last ${this.generations.keep} generations of tenant ${tenant} the gateway keeps (history.keep); it cannot be restored`, {
            keep: this.generations.keep,
          });
        }
        if (!state) throw new SvcError('Svc.Publish.NotFound', `Generation ${to} is not a generation of tenant ${tenant}`);
        await this.restoreCheck?.(tenant, state);
        const all = await this.entities.published();
        const published = [...all.filter((e) => e.tenant !== tenant), ...state];
        const compiled = compile({ tenant, published, drafts: [], disabled: await this.plugins.allDisabled(), upstreams: this.upstreams, secrets: this.secrets, tls: this.tlsChecks(), redis: this.redis }, this.parts, { steps: this.steps });
        const candidate = (await this.generations.current()) + 1;
        if (!compiled.ok) throw rejected(candidate, compiled.issues, []);
        const current = new Map(all.filter((e) => e.tenant === tenant).map((e) => [`${e.kind}/${e.name}`, JSON.stringify(e.doc)]));
        const target = new Map(state.map((e) => [`${e.kind}/${e.name}`, JSON.stringify(e.doc)]));
        const planned = [...new Set([...current.keys(), ...target.keys()])].filter((k) => current.get(k) !== target.get(k)).sort();
        // The content already serving: nothing to publish, as for a go without changes.
        if (planned.length === 0) return null;
        await this.record(tenant, 'rollback', candidate, compiled.generation, planned, published, null, onCommit);
        return { id: candidate, payload: compiled.generation, planned };
      });
      if (r === null) return { ok: true as const, generation: this.currentId(), planned: [] };
      return this.serve(tenant, 'rollback', r.id, r.payload, r.planned);
    });
  }

  /**
   * Serves `next`'s step package builds (worker.json's packages read again, or at start): the
   * published state is compiled with them (no drafts) and becomes the served generation under
   * its number, for the workers that start from now on; then `next`'s steps are this registry's.
   * A state the new builds refuse changes nothing: the issues are thrown. Returns whether the
   * generation's stamped builds changed.
   */
  takeSteps(next: StepRegistry): Promise<boolean> {
    return this.serial(async () => {
      const served = this.served;
      let changed = false;
      if (served !== null) {
        const r = compile({ ...(await this.snapshot('default')), drafts: [] }, this.parts, { steps: next });
        if (!r.ok) {
          const first = r.issues.slice(0, 3).map((i) => `${i.kind} ${i.name} ${i.pointer}: ${i.message}`);
          throw new SvcError('Svc.Workers.PackagesRefused', `The step packages as read again refuse the published configuration (${first.join('; ')}); no worker was replaced`, { issues: r.issues });
        }
        changed = JSON.stringify(r.generation.stepBuilds ?? {}) !== JSON.stringify(served.payload.stepBuilds ?? {});
        if (changed) this.served = { id: served.id, payload: r.generation };
      }
      if (next !== this.steps) this.steps.adopt(next);
      return changed;
    });
  }

  /**
   * A generation another node committed (fleet-follower.ts): served here too, in the publish
   * queue so it never crosses one of this node's own; an older one than served is ignored.
   */
  follow(gen: GenerationMessage): Promise<void> {
    return this.serial(async () => {
      if (gen.id <= this.currentId()) return;
      this.served = gen;
      this.onServed?.(gen);
      const b = await broadcastGeneration(this.pool(), gen, this.ackTimeoutMs, this.log);
      this.log.info({ generation: gen.id, acked: b.acked }, 'following the fleet');
    });
  }

  /** The compiler's input: everything published, the tenant's drafts, every tenant's disabled steps, the secret policy. */
  private async snapshot(tenant: string) {
    return { tenant, published: await this.entities.published(), drafts: await this.entities.drafts(tenant), disabled: await this.plugins.allDisabled(), upstreams: this.upstreams, secrets: this.secrets, tls: this.tlsChecks(), redis: this.redis };
  }

  private tlsChecks() {
    return this.tls ? { now: Date.now(), ...this.tls } : undefined;
  }

  /** The generation row and the tenant's published state, in the caller's transaction. */
  private async record(
    tenant: string,
    action: 'publish' | 'rollback',
    id: number,
    payload: CompiledGeneration,
    planned: string[],
    effective: EntityRow[],
    /** The drafts the publish read, cleared as read; null (a rollback) clears none. */
    consumed: readonly DraftRow[] | null,
    onCommit?: (generation: number) => Promise<void>,
  ): Promise<void> {
    const tenantState = effective.filter((e) => e.tenant === tenant);
    await this.generations.insert({ id, tenant, action, planned, payload, published: tenantState });
    await this.entities.replacePublished(tenant, tenantState, new Set(planned), id, consumed);
    await this.fleet?.announce(id);
    await onCommit?.(id);
  }

  /** A committed generation to every worker; the answer waits for every ack. */
  private async serve(tenant: string, action: 'publish' | 'rollback', id: number, payload: CompiledGeneration, planned: string[]): Promise<PublishResult> {
    this.served = { id, payload };
    this.onServed?.(this.served);
    const b = await broadcastGeneration(this.pool(), this.served, this.ackTimeoutMs, this.log);
    this.log.info({ tenant, generation: id, action, planned, acked: b.acked }, 'published');
    if (!b.ok) {
      // Why, in the message too: a worker that refused the generation says which step and build.
      const why = [...new Set(b.failed.map((f) => f.reason))].join('; ');
      throw new SvcError('Svc.Publish.Unacknowledged', `Generation ${id} is committed but not every worker acknowledged it (${why}); those workers are being restarted with it`, {
        generation: id,
        failed: b.failed,
      });
    }
    return { ok: true, generation: id, planned };
  }

  private refuseWhileRestarting(): void {
    if (this.restarting()) throw new SvcError('Svc.Publish.WorkersRestarting');
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** Thrown to roll back a transaction whose work was only a trial. */
const UNDO = Symbol('undo');

function rejected(candidate: number, issues: CompileIssue[], planned: string[]): SvcError {
  return new SvcError('Svc.Publish.Rejected', rejectedMessage(issues.length), {
    success: false,
    ok: false,
    candidateGeneration: candidate,
    issues,
    planned,
  });
}
