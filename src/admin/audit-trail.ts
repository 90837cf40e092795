import type { Operation } from './contract.js';
import type { Identity } from './identity.js';
import type { Params } from './op-router.js';
import type { AuditNote } from './op-context.js';
import type { AuditEntry } from '../store/audit-repo.js';
import { redactSubKeys } from './keys/key-format.js';

/** One admin write, as the audit trail records it (the store adds the id). */
export type AuditRecord = Omit<AuditEntry, 'id'>;

/** Writes are POSTs the contract does not label read (dry-run is a read). */
export function isAuditedWrite(op: Operation): boolean {
  return op.method === 'POST' && op.access !== 'read';
}

/** The target a path names: kind/name, a step code, a key id or a generation. */
export function targetOf(params: Params, note: AuditNote): string | null {
  if (note.target !== undefined) return note.target;
  if (params.kind !== undefined && params.name !== undefined) return `${params.kind}/${params.name}`;
  if (params.generation !== undefined) return `generation ${params.generation}`;
  return params.code ?? params.id ?? null;
}

export function auditRecord(op: Operation, params: Params, identity: Identity, note: AuditNote, status: number, traceId: string): AuditRecord {
  return {
    at: Date.now(),
    identityId: identity.id,
    identityKind: identity.kind,
    tenant: params.tenant ?? null,
    operation: op.id,
    target: redactTarget(targetOf(params, note)),
    status,
    traceId,
    generation: note.generation ?? null,
  };
}

const redactTarget = (t: string | null) => (t === null ? null : redactSubKeys(t));

/** Where audit records go: appended before the answer, corrected if the answer changed after. */
export interface AuditSink {
  append(record: AuditRecord): Promise<number>;
  /** A record appended in a handler's own transaction, whose answer then came out different: false when it is not there (rolled back with it). */
  setStatus(id: number, status: number): Promise<boolean>;
}

/**
 * One audited call's record: appended at the first status it settles with (inside the
 * handler's transaction when there is one), then only corrected, so a call has one record.
 */
export class CallAuditRecord {
  private appended: { id: Promise<number>; status: number } | null = null;

  constructor(
    private readonly sink: AuditSink,
    /** Built when appended: the handler's note (target, generation) is filled in by then. */
    private readonly build: (status: number) => AuditRecord,
  ) {}

  async settle(status: number): Promise<void> {
    if (this.appended === null) return this.append(status);
    if (this.appended.status === status) return;
    this.appended.status = status;
    // A record appended in a transaction that then rolled back is gone: appended again.
    if (!(await this.sink.setStatus(await this.appended.id, status))) await this.append(status);
  }

  private async append(status: number): Promise<void> {
    // Noted before the await: a second settle meanwhile corrects this record, never appends another.
    const id = this.sink.append(this.build(status));
    this.appended = { id, status };
    await id;
  }
}
