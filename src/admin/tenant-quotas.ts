import { SvcError } from '../shared/errors.js';
import { TokenBucket } from '../shared/token-bucket.js';
import type { GatewayConfig } from '../shared/gateway-config-schema.js';
import type { EntityRepo } from '../store/entity-repo.js';
import type { Kind } from '../contracts/entities.js';

export interface QuotaLimits {
  entities: number;
  documentBytes: number;
  totalBytes: number;
  publishesPerMinute: number;
}

/**
 * Per-tenant quotas, checked at the admin edge before a write or a publish, so one
 * tenant cannot fill the volume or keep the supervisor compiling. Usage is the
 * tenant's configuration as its next publish would make it (drafts over published).
 */
export class TenantQuotas {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly config: GatewayConfig['quotas'],
    private readonly entities: EntityRepo,
  ) {}

  limits(tenant: string): QuotaLimits {
    const { tenants, ...base } = this.config;
    const own = Object.entries(tenants[tenant] ?? {}).filter(([, n]) => n !== undefined);
    return { ...base, ...Object.fromEntries(own) };
  }

  /** Throws a Svc.Quota error when storing `doc` as tenant/kind/name would pass a limit. */
  checkWrite(tenant: string, kind: Kind, name: string, doc: unknown): void {
    const q = this.limits(tenant);
    const bytes = Buffer.byteLength(JSON.stringify(doc));
    if (bytes > q.documentBytes) {
      throw new SvcError('Svc.Quota.DocumentTooLarge', `The ${kind} document is ${bytes} bytes; tenant ${tenant} may store documents of at most ${q.documentBytes} bytes`, {
        limit: q.documentBytes,
        actual: bytes,
      });
    }
    const u = this.entities.usage(tenant, kind, name);
    // A write that does not grow a measure passes even over a lowered limit: a tenant can always shrink.
    if (u.self === null && u.others.entities + 1 > q.entities) {
      throw new SvcError('Svc.Quota.Entities', `Tenant ${tenant} has ${u.others.entities} entities; its quota is ${q.entities}`, { limit: q.entities, actual: u.others.entities });
    }
    const total = u.others.bytes + bytes;
    if (total > q.totalBytes && bytes > (u.self ?? 0)) {
      throw new SvcError('Svc.Quota.Bytes', `Tenant ${tenant} would store ${total} bytes of documents; its quota is ${q.totalBytes}`, { limit: q.totalBytes, actual: total });
    }
  }

  /** Takes one publish (or rollback) from the tenant's per-minute budget, or throws 429 with retryAfter. */
  takePublish(tenant: string, now = Date.now()): void {
    const perMinute = this.limits(tenant).publishesPerMinute;
    let b = this.buckets.get(tenant);
    if (!b || b.capacity !== perMinute) this.buckets.set(tenant, (b = new TokenBucket(perMinute / 60, perMinute, now)));
    if (b.take(1, now) === 1) return;
    const retryAfter = Math.max(1, Math.ceil(b.msUntilToken(now) / 1000));
    throw new SvcError('Svc.Quota.Publishes', `Tenant ${tenant} may publish ${perMinute} times a minute; retry in ${retryAfter} s`, { limit: perMinute, retryAfter });
  }
}
