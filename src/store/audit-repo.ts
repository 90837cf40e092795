import type { Db } from './volume.js';

export interface AuditEntry {
  id: number;
  at: number;
  identityId: string | null;
  identityKind: 'system' | 'tenant' | null;
  tenant: string | null;
  operation: string;
  target: string | null;
  status: number;
  traceId: string;
  generation: number | null;
}

interface Row {
  id: number;
  at: number;
  identity_id: string | null;
  identity_kind: 'system' | 'tenant' | null;
  tenant: string | null;
  operation: string;
  target: string | null;
  status: number;
  trace_id: string;
  generation: number | null;
}

/** The audit trail: append only (a record's status aside); read newest first, a page at a time. */
export class AuditRepo {
  constructor(private readonly db: Db) {}

  async append(e: Omit<AuditEntry, 'id'>): Promise<number> {
    const r = (await this.db
      .prepare(
        `INSERT INTO audit_log (at, identity_id, identity_kind, tenant, operation, target, status, trace_id, generation)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      )
      .get(e.at, e.identityId, e.identityKind, e.tenant, e.operation, e.target, e.status, e.traceId, e.generation)) as { id: number };
    return Number(r.id);
  }

  /** The answer of a write whose record was appended with its commit came out different (a publish some worker did not acknowledge). */
  async setStatus(id: number, status: number): Promise<boolean> {
    return (await this.db.prepare('UPDATE audit_log SET status = ? WHERE id = ?').run(status, id)).changes > 0;
  }

  /** Entries of one tenant with id < `before` (all when null), newest first. */
  async list(tenant: string, limit: number, before: number | null): Promise<AuditEntry[]> {
    const rows = (await this.db
      .prepare('SELECT * FROM audit_log WHERE tenant = ? AND id < ? ORDER BY id DESC LIMIT ?')
      .all(tenant, before ?? Number.MAX_SAFE_INTEGER, limit)) as Row[];
    return rows.map((r) => ({
      id: r.id,
      at: r.at,
      identityId: r.identity_id,
      identityKind: r.identity_kind,
      tenant: r.tenant,
      operation: r.operation,
      target: r.target,
      status: r.status,
      traceId: r.trace_id,
      generation: r.generation,
    }));
  }
}
