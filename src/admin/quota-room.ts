import { SvcError } from '../shared/errors.js';
import type { Kind } from '../contracts/entities.js';

export interface QuotaLimits {
  entities: number;
  documentBytes: number;
  totalBytes: number;
  publishesPerMinute: number;
  dryRunsPerMinute: number;
}

/**
 * A tenant's next-publish configuration as the quotas count it (entities and document bytes),
 * taken from the store once under the tenant's lock: a write of one draft or of a whole sync's
 * is checked here entity by entity, in order, each one counting the ones before it.
 */
export class QuotaRoom {
  private count: number;
  private total = 0;

  /** `sizes`: each entity's document bytes by kind/name key (one draft: only its own, with `others` the rest). */
  constructor(
    private readonly tenant: string,
    private readonly q: QuotaLimits,
    private readonly sizes: Map<string, number>,
    others = { entities: 0, bytes: 0 },
  ) {
    this.count = others.entities + sizes.size;
    this.total = others.bytes;
    for (const n of sizes.values()) this.total += n;
  }

  /** Throws DocumentTooLarge for a document past the tenant's bound; checked before any store access. */
  static documentFits(tenant: string, q: QuotaLimits, kind: Kind, bytes: number): void {
    if (bytes > q.documentBytes) {
      throw new SvcError('Svc.Quota.DocumentTooLarge', `The ${kind} document is ${bytes} bytes; tenant ${tenant} may store documents of at most ${q.documentBytes} bytes`, {
        limit: q.documentBytes,
        actual: bytes,
      });
    }
  }

  /** Counts the draft of kind/name at `bytes` in, or throws the Svc.Quota error a write of it alone would. */
  admit(kind: Kind, name: string, bytes: number): void {
    const key = `${kind}/${name}`;
    const self = this.sizes.get(key) ?? null;
    const others = { entities: this.count - (self === null ? 0 : 1), bytes: this.total - (self ?? 0) };
    const { tenant, q } = this;
    // A write that does not grow a measure passes even over a lowered limit: a tenant can always shrink.
    if (self === null && others.entities + 1 > q.entities) {
      throw new SvcError('Svc.Quota.Entities', `Tenant ${tenant} has ${others.entities} entities; its quota is ${q.entities}`, { limit: q.entities, actual: others.entities });
    }
    const total = others.bytes + bytes;
    if (total > q.totalBytes && bytes > (self ?? 0)) {
      throw new SvcError('Svc.Quota.Bytes', `Tenant ${tenant} would store ${total} bytes of documents; its quota is ${q.totalBytes}`, { limit: q.totalBytes, actual: total });
    }
    this.sizes.set(key, bytes);
    this.count = others.entities + 1;
    this.total = total;
  }
}
