import { createHash } from 'node:crypto';
import type { CompiledCluster, CompiledRoute, CompileIssue } from '../contracts/generation.js';
import type { EntityRow } from '../contracts/entities.js';
import type { TenantCert } from './compile-certs.js';

/** What one tenant's entities compile to, independent of every other tenant. */
export interface TenantPart {
  clusters: Record<string, CompiledCluster>;
  /** Ranked. Shared with the generations built from this part: never mutated. */
  routes: CompiledRoute[];
  /** Document and step issues of this tenant's entities (host claims are checked across tenants). */
  issues: CompileIssue[];
  certs: TenantCert[];
  /** Warnings of the publishing tenant's own checks (certificates about to expire). */
  warnings: CompileIssue[];
}

/**
 * Tenants' compiled parts as any other tenant's publish compiles them (no checks of the
 * publishing tenant's own), keyed by a hash of their entities, so a publish recompiles
 * only what changed. A memo: the result is the one a full compile gives.
 */
export class TenantPartCache {
  private readonly parts = new Map<string, { key: string; part: TenantPart }>();

  static key(rows: readonly EntityRow[]): string {
    const h = createHash('sha256');
    const sorted = [...rows].sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const r of sorted) h.update(`${r.kind}\u0000${r.name}\u0000${JSON.stringify(r.doc)}\u0000`);
    return h.digest('base64url');
  }

  get(tenant: string, key: string): TenantPart | undefined {
    const e = this.parts.get(tenant);
    return e && e.key === key ? e.part : undefined;
  }

  set(tenant: string, key: string, part: TenantPart): void {
    this.parts.set(tenant, { key, part });
  }

  /** Forgets tenants that no longer have entities. */
  retain(tenants: ReadonlySet<string>): void {
    for (const t of this.parts.keys()) if (!tenants.has(t)) this.parts.delete(t);
  }
}
