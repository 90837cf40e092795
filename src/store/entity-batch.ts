import type { Db } from './volume.js';
import type { DraftRow, Kind } from '../contracts/entities.js';
import { anyOf, chunks, tuples } from './sql-batch.js';

/** A draft as stored: its document's JSON text, or null for a staged delete. */
export interface DraftText {
  kind: Kind;
  name: string;
  text: string | null;
}

const keyOf = (r: { kind: string; name: string }) => `${r.kind}/${r.name}`;

/** The last row of each kind/name: one INSERT ... ON CONFLICT may not touch a row twice (PostgreSQL). */
function lastOfEach<T extends { kind: string; name: string }>(rows: readonly T[]): T[] {
  return [...new Map(rows.map((r) => [keyOf(r), r])).values()];
}

/** Writes drafts (insert or replace), CHUNK rows a statement. */
export async function upsertDrafts(db: Db, tenant: string, rows: readonly DraftText[], now: number): Promise<void> {
  for (const part of chunks(lastOfEach(rows))) {
    await db
      .prepare(
        `INSERT INTO entity_draft (tenant, kind, name, doc, updated_at) VALUES ${tuples(part.length, 5)}
         ON CONFLICT (tenant, kind, name) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at`,
      )
      .run(...part.flatMap((r) => [tenant, r.kind, r.name, r.text, now]));
  }
}

/**
 * Stages removals: a published entity gets a delete draft, a draft never published is dropped.
 * Returns the keys that had something to remove. One read of the tenant's published keys, then
 * CHUNK rows a statement.
 */
export async function stageDeletes(db: Db, tenant: string, keys: readonly { kind: Kind; name: string }[], now: number): Promise<Set<string>> {
  const rows = (await db.prepare('SELECT kind, name FROM entity_published WHERE tenant = ?').all(tenant)) as { kind: string; name: string }[];
  const published = new Set(rows.map(keyOf));
  const unique = lastOfEach(keys);
  const removed = new Set<string>();
  for (const part of chunks(unique.filter((k) => !published.has(keyOf(k))))) {
    const gone = (await db
      .prepare(`DELETE FROM entity_draft WHERE tenant = ? AND doc IS NOT NULL AND (${anyOf(part.length, 'kind = ? AND name = ?')}) RETURNING kind, name`)
      .all(tenant, ...part.flatMap((k) => [k.kind, k.name]))) as { kind: string; name: string }[];
    for (const g of gone) removed.add(keyOf(g));
  }
  const staged = unique.filter((k) => published.has(keyOf(k)));
  await upsertDrafts(db, tenant, staged.map((k) => ({ kind: k.kind, name: k.name, text: null })), now);
  for (const k of staged) removed.add(keyOf(k));
  return removed;
}

/** Inserts the tenant's published rows (its old ones deleted before), CHUNK rows a statement. */
export async function insertPublished(db: Db, tenant: string, rows: readonly (DraftText & { text: string; generation: number })[]): Promise<void> {
  for (const part of chunks(rows)) {
    await db
      .prepare(`INSERT INTO entity_published (tenant, kind, name, doc, generation) VALUES ${tuples(part.length, 5)}`)
      .run(...part.flatMap((r) => [tenant, r.kind, r.name, r.text, r.generation]));
  }
}

/** Deletes the drafts a publish read, each only as it was read (same time and text), CHUNK rows a statement. */
export async function clearConsumed(db: Db, tenant: string, drafts: readonly DraftRow[]): Promise<void> {
  const read = drafts.filter((d) => d.stored);
  for (const part of chunks(read)) {
    await db
      .prepare(`DELETE FROM entity_draft WHERE tenant = ? AND (${anyOf(part.length, 'kind = ? AND name = ? AND updated_at = ? AND doc IS NOT DISTINCT FROM ?')})`)
      .run(tenant, ...part.flatMap((d) => [d.kind, d.name, d.stored!.updatedAt, d.stored!.text]));
  }
}
