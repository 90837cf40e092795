import type { Db } from './volume.js';
import type { Kind } from '../contracts/entities.js';
import type { DraftRow, EntityRow } from '../contracts/entities.js';
import { clearConsumed, insertPublished, stageDeletes, upsertDrafts, type DraftText } from './entity-batch.js';

export interface EntityView {
  tenant: string;
  kind: Kind;
  name: string;
  /** `published` when serving with no pending change; `draft` when a change waits for publish. */
  state: 'draft' | 'published';
  /** The pending change: a new document (`set`), a staged removal (`delete`), or none. */
  pending: 'set' | 'delete' | null;
  draft: { doc: unknown; updatedAt: string } | null;
  published: { doc: unknown; generation: number } | null;
}

/** Draft and published entities. Drafts never reach workers; only a publish moves them. */
export class EntityRepo {
  constructor(private readonly db: Db) {}

  setDraft(tenant: string, kind: Kind, name: string, doc: unknown, now = Date.now()): Promise<void> {
    return this.setDraftRaw(tenant, kind, name, JSON.stringify(doc), now);
  }

  /** Stages a removal for the next publish. False when there is nothing to remove. */
  async stageDelete(tenant: string, kind: Kind, name: string, now = Date.now()): Promise<boolean> {
    const published = await this.db.prepare('SELECT 1 FROM entity_published WHERE tenant = ? AND kind = ? AND name = ?').get(tenant, kind, name);
    if (!published) {
      // A draft never published is simply dropped.
      return (await this.db.prepare('DELETE FROM entity_draft WHERE tenant = ? AND kind = ? AND name = ? AND doc IS NOT NULL').run(tenant, kind, name)).changes > 0;
    }
    await this.setDraftRaw(tenant, kind, name, null, now);
    return true;
  }

  /** Many drafts (their JSON texts) in a few statements: a sync's writes. */
  setDrafts(tenant: string, rows: readonly DraftText[], now = Date.now()): Promise<void> {
    return upsertDrafts(this.db, tenant, rows, now);
  }

  /** Many removals staged at once (as stageDelete each); returns the kind/name keys that had something to remove. */
  stageDeletes(tenant: string, keys: readonly { kind: Kind; name: string }[], now = Date.now()): Promise<Set<string>> {
    return stageDeletes(this.db, tenant, keys, now);
  }

  private async setDraftRaw(tenant: string, kind: Kind, name: string, doc: string | null, now: number): Promise<void> {
    await this.db
      .prepare(
        `INSERT INTO entity_draft (tenant, kind, name, doc, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (tenant, kind, name) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at`,
      )
      .run(tenant, kind, name, doc, now);
  }

  /**
   * The tenant's configuration as its next publish would make it (a draft over the
   * published document, a staged delete as gone): entity count and document bytes
   * without tenant/kind/name, and that entity's own bytes (null when it has none).
   */
  async usage(tenant: string, kind: Kind, name: string): Promise<{ others: { entities: number; bytes: number }; self: number | null }> {
    const rows = (await this.db
      .prepare(
        `SELECT CASE WHEN kind = ? AND name = ? THEN 1 ELSE 0 END AS self, COUNT(*) AS n, COALESCE(SUM(len), 0) AS bytes FROM (
           SELECT kind, name, octet_length(doc) AS len FROM entity_draft WHERE tenant = ? AND doc IS NOT NULL
           UNION ALL
           SELECT kind, name, octet_length(doc) FROM entity_published p WHERE tenant = ?
             AND NOT EXISTS (SELECT 1 FROM entity_draft d WHERE d.tenant = p.tenant AND d.kind = p.kind AND d.name = p.name)
         ) AS usage GROUP BY 1`,
      )
      .all(kind, name, tenant, tenant)) as { self: number; n: number; bytes: number }[];
    const others = rows.find((r) => r.self === 0);
    const self = rows.find((r) => r.self === 1);
    return { others: { entities: others?.n ?? 0, bytes: others?.bytes ?? 0 }, self: self ? self.bytes : null };
  }

  /**
   * Each entity of the tenant's configuration as its next publish would make it, with its
   * document's bytes, by kind/name key: what `usage` counts, for a batch checked in memory.
   */
  async sizes(tenant: string): Promise<Map<string, number>> {
    const rows = (await this.db
      .prepare(
        `SELECT kind, name, octet_length(doc) AS len FROM entity_draft WHERE tenant = ? AND doc IS NOT NULL
         UNION ALL
         SELECT kind, name, octet_length(doc) FROM entity_published p WHERE tenant = ?
           AND NOT EXISTS (SELECT 1 FROM entity_draft d WHERE d.tenant = p.tenant AND d.kind = p.kind AND d.name = p.name)`,
      )
      .all(tenant, tenant)) as { kind: string; name: string; len: number }[];
    return new Map(rows.map((r) => [`${r.kind}/${r.name}`, Number(r.len)]));
  }

  async get(tenant: string, kind: Kind, name: string): Promise<EntityView | null> {
    const d = (await this.db.prepare('SELECT doc, updated_at FROM entity_draft WHERE tenant = ? AND kind = ? AND name = ?').get(tenant, kind, name)) as
      | { doc: string | null; updated_at: number }
      | undefined;
    const p = (await this.db.prepare('SELECT doc, generation FROM entity_published WHERE tenant = ? AND kind = ? AND name = ?').get(tenant, kind, name)) as
      | { doc: string; generation: number }
      | undefined;
    if (!d && !p) return null;
    return view(tenant, kind, name, d, p);
  }

  async list(tenant: string, kind: Kind): Promise<EntityView[]> {
    const drafts = (await this.db.prepare('SELECT name, doc, updated_at FROM entity_draft WHERE tenant = ? AND kind = ?').all(tenant, kind)) as {
      name: string;
      doc: string | null;
      updated_at: number;
    }[];
    const pubs = (await this.db.prepare('SELECT name, doc, generation FROM entity_published WHERE tenant = ? AND kind = ?').all(tenant, kind)) as {
      name: string;
      doc: string;
      generation: number;
    }[];
    const names = new Set([...drafts.map((d) => d.name), ...pubs.map((p) => p.name)]);
    const dm = new Map(drafts.map((d) => [d.name, d]));
    const pm = new Map(pubs.map((p) => [p.name, p]));
    return [...names].sort().map((n) => view(tenant, kind, n, dm.get(n), pm.get(n)));
  }

  /** Every published entity of every tenant, or of one. */
  async published(tenant?: string): Promise<EntityRow[]> {
    const rows = (await (
      tenant === undefined
        ? this.db.prepare('SELECT tenant, kind, name, doc FROM entity_published').all()
        : this.db.prepare('SELECT tenant, kind, name, doc FROM entity_published WHERE tenant = ?').all(tenant)
    )) as { tenant: string; kind: Kind; name: string; doc: string }[];
    return rows.map((r) => ({ ...r, doc: JSON.parse(r.doc) }));
  }

  async drafts(tenant: string): Promise<DraftRow[]> {
    const rows = (await this.db.prepare('SELECT kind, name, doc, updated_at FROM entity_draft WHERE tenant = ?').all(tenant)) as { kind: Kind; name: string; doc: string | null; updated_at: number }[];
    return rows.map((r) => ({ kind: r.kind, name: r.name, doc: r.doc === null ? null : JSON.parse(r.doc), stored: { text: r.doc, updatedAt: r.updated_at } }));
  }

  /**
   * Makes `entities` the tenant's published state as of `generation` and clears `consumed`,
   * the drafts that produced it, as they were read: a draft written since (on another node of
   * a shared store) stays a draft. Runs inside the publisher's transaction.
   */
  async replacePublished(tenant: string, entities: readonly EntityRow[], changed: ReadonlySet<string>, generation: number, consumed: readonly DraftRow[] | null): Promise<void> {
    const prior = new Map(
      ((await this.db.prepare('SELECT kind, name, generation FROM entity_published WHERE tenant = ?').all(tenant)) as { kind: string; name: string; generation: number }[]).map(
        (r) => [`${r.kind}/${r.name}`, r.generation],
      ),
    );
    await this.db.prepare('DELETE FROM entity_published WHERE tenant = ?').run(tenant);
    const rows = entities
      .filter((e) => e.tenant === tenant)
      .map((e) => {
        const key = `${e.kind}/${e.name}`;
        return { kind: e.kind, name: e.name, text: JSON.stringify(e.doc), generation: changed.has(key) ? generation : (prior.get(key) ?? generation) };
      });
    await insertPublished(this.db, tenant, rows);
    if (consumed) await clearConsumed(this.db, tenant, consumed);
    // A staged delete of something no longer published (a rollback removed it) stages nothing.
    else {
      await this.db
        .prepare(
          `DELETE FROM entity_draft WHERE tenant = ? AND doc IS NULL AND NOT EXISTS
             (SELECT 1 FROM entity_published p WHERE p.tenant = entity_draft.tenant AND p.kind = entity_draft.kind AND p.name = entity_draft.name)`,
        )
        .run(tenant);
    }
  }
}

function view(
  tenant: string,
  kind: Kind,
  name: string,
  d: { doc: string | null; updated_at: number } | undefined,
  p: { doc: string; generation: number } | undefined,
): EntityView {
  const pending = d ? (d.doc === null ? 'delete' : 'set') : null;
  return {
    tenant,
    kind,
    name,
    state: pending ? 'draft' : 'published',
    pending,
    draft: d && d.doc !== null ? { doc: JSON.parse(d.doc), updatedAt: new Date(d.updated_at).toISOString() } : null,
    published: p ? { doc: JSON.parse(p.doc), generation: p.generation } : null,
  };
}
