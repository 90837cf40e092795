import { SvcError } from '../shared/errors.js';
import { QuotaRoom, type QuotaLimits } from './quota-room.js';
import { Slicer } from '../shared/cpu-slices.js';
import { TokenBucket } from '../shared/token-bucket.js';
import type { GatewayConfig } from '../shared/gateway-config-schema.js';
import type { EntityRepo } from '../store/entity-repo.js';
import type { Kind } from '../contracts/entities.js';
import type { StoreDb } from '../contracts/store-db.js';

export type { QuotaLimits } from './quota-room.js';

/**
 * Per-tenant quotas, so one tenant cannot fill the volume or keep the supervisor compiling.
 * Usage is the tenant's configuration as its next publish would make it (drafts over
 * published), counted in the transaction that writes the draft, under the tenant's lock:
 * two calls (on one node or on several sharing a postgres:// store) never both pass on the
 * same room. The per-minute budgets are each node's own.
 */
export class TenantQuotas {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly config: GatewayConfig['quotas'],
    private readonly entities: EntityRepo,
    private readonly db: StoreDb,
  ) {}

  limits(tenant: string): QuotaLimits {
    const { tenants, ...base } = this.config;
    const own = Object.entries(tenants[tenant] ?? {}).filter(([, n]) => n !== undefined);
    return { ...base, ...Object.fromEntries(own) };
  }

  /**
   * Stores `doc` as the draft of tenant/kind/name, or throws a Svc.Quota error when that would
   * pass a limit. Every draft write that can grow the tenant goes through here. In the caller's
   * transaction when it has one (a savepoint), which then holds the tenant's lock until it ends.
   */
  setDraft(tenant: string, kind: Kind, name: string, doc: unknown): Promise<void> {
    const q = this.limits(tenant);
    const bytes = Buffer.byteLength(JSON.stringify(doc));
    QuotaRoom.documentFits(tenant, q, kind, bytes);
    return this.db.transaction(async () => {
      await this.db.lockTenant(tenant);
      const u = await this.entities.usage(tenant, kind, name);
      const own = new Map(u.self === null ? [] : [[`${kind}/${name}`, u.self]]);
      new QuotaRoom(tenant, q, own, u.others).admit(kind, name, bytes);
      await this.entities.setDraft(tenant, kind, name, doc);
    });
  }

  /**
   * Stores many drafts (a sync's, in its order) as setDraft would one after another, with one
   * lock, one read of the tenant's usage and a few multi-row writes: each draft is checked in
   * memory counting the ones before it, and the first that would pass a limit throws that
   * error (the same code and numbers) before anything of the batch is written.
   */
  setDrafts(tenant: string, drafts: readonly { kind: Kind; name: string; doc: unknown }[]): Promise<void> {
    const q = this.limits(tenant);
    return this.db.transaction(async () => {
      await this.db.lockTenant(tenant);
      const room = new QuotaRoom(tenant, q, await this.entities.sizes(tenant));
      const slicer = new Slicer();
      const rows = [];
      for (const d of drafts) {
        const text = JSON.stringify(d.doc);
        const bytes = Buffer.byteLength(text);
        QuotaRoom.documentFits(tenant, q, d.kind, bytes);
        room.admit(d.kind, d.name, bytes);
        rows.push({ kind: d.kind, name: d.name, text });
        await slicer.check();
      }
      await this.entities.setDrafts(tenant, rows);
    });
  }

  /**
   * Inside a rollback's transaction: refuses restoring `state` as the tenant's published
   * configuration when, with its drafts over it, a measure would grow past its limit (the next
   * publish would serve it). Under the tenant's lock, so a concurrent write counts against it.
   */
  async checkRestore(tenant: string, state: readonly { kind: Kind; name: string; doc: unknown }[]): Promise<void> {
    const q = this.limits(tenant);
    await this.db.lockTenant(tenant);
    const before = await this.entities.sizes(tenant);
    const after = new Map(state.map((e) => [`${e.kind}/${e.name}`, Buffer.byteLength(JSON.stringify(e.doc))]));
    for (const d of await this.entities.drafts(tenant)) {
      const key = `${d.kind}/${d.name}`;
      if (d.doc === null) after.delete(key);
      else after.set(key, Buffer.byteLength(JSON.stringify(d.doc)));
    }
    const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    if (after.size > q.entities && after.size > before.size) {
      throw new SvcError('Svc.Quota.Entities', `Restoring this generation with tenant ${tenant}'s drafts makes ${after.size} entities; its quota is ${q.entities}`, { limit: q.entities, actual: after.size });
    }
    const total = sum(after);
    if (total > q.totalBytes && total > sum(before)) {
      throw new SvcError('Svc.Quota.Bytes', `Restoring this generation with tenant ${tenant}'s drafts makes ${total} bytes of documents; its quota is ${q.totalBytes}`, { limit: q.totalBytes, actual: total });
    }
  }

  /**
   * Inside the caller's transaction: holds the tenant's lock until it ends. A write of several
   * drafts takes it before its first write (a staged delete too), so it never waits for the
   * lock holding rows another writer of the tenant needs.
   */
  lock(tenant: string): Promise<void> {
    return this.db.lockTenant(tenant);
  }

  /** Takes one publish (or rollback) from the tenant's per-minute budget, or throws 429 with retryAfter. */
  takePublish(tenant: string, now = Date.now()): void {
    const perMinute = this.limits(tenant).publishesPerMinute;
    const wait = this.take('publish', tenant, perMinute, now);
    if (wait > 0) throw new SvcError('Svc.Quota.Publishes', `Tenant ${tenant} may publish ${perMinute} times a minute; retry in ${wait} s`, { limit: perMinute, retryAfter: wait });
  }

  /**
   * Takes one compile of the drafts that publishes nothing (a dry-run, an explain against the
   * drafts, a sync's dry-run with publish): each compiles the tenant's whole state on the
   * supervisor, so they are budgeted like publishes, with a budget of their own.
   */
  takeDryRun(tenant: string, now = Date.now()): void {
    const perMinute = this.limits(tenant).dryRunsPerMinute;
    const wait = this.take('dry-run', tenant, perMinute, now);
    if (wait > 0) throw new SvcError('Svc.Quota.DryRuns', `Tenant ${tenant} may compile its drafts ${perMinute} times a minute; retry in ${wait} s`, { limit: perMinute, retryAfter: wait });
  }

  /** One token from the tenant's bucket of `what`: 0, or the seconds until one is back. */
  private take(what: string, tenant: string, perMinute: number, now: number): number {
    const key = `${what} ${tenant}`;
    let b = this.buckets.get(key);
    if (!b || b.capacity !== perMinute) this.buckets.set(key, (b = new TokenBucket(perMinute / 60, perMinute, now)));
    if (b.take(1, now) === 1) return 0;
    return Math.max(1, Math.ceil(b.msUntilToken(now) / 1000));
  }
}
