import type { Db } from './volume.js';

/** A stored sub-key: never the plaintext, only its fingerprint. */
export interface KeyRecord {
  id: string;
  tenant: string;
  name: string;
  fingerprint: string;
  scopes: string[];
  issuer: string;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

interface Row {
  id: string;
  tenant: string;
  name: string;
  fingerprint: string;
  scopes: string;
  issuer: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at?: number | null;
}

const toRecord = (r: Row): KeyRecord => ({
  id: r.id,
  tenant: r.tenant,
  name: r.name,
  fingerprint: r.fingerprint,
  scopes: JSON.parse(r.scopes) as string[],
  issuer: r.issuer,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
});

/**
 * Tenant sub-keys and their usage. `lastUsedAt` lives in admin_key_usage, apart from
 * the key record, so recording use never rewrites the key row.
 */
export class KeyRepo {
  /** Store lookups by fingerprint: exported as a metric, so tests can tell a refusal that never reached the store. */
  lookups = 0;

  constructor(private readonly db: Db) {}

  /**
   * Stores a key. When its issuer is a stored key (a sub-key of the same tenant; a system key
   * has no row), that row is locked (a no-op update) in the same transaction and must still
   * be live: a revocation of the issuer on another node either waits and then finds this key
   * among its descendants, or came first and this insert is refused (false).
   */
  insert(k: KeyRecord): Promise<boolean> {
    return this.db.transaction(async () => {
      const issuer = (await this.db.prepare('UPDATE admin_key SET revoked_at = revoked_at WHERE tenant = ? AND id = ? RETURNING revoked_at').get(k.tenant, k.issuer)) as
        | { revoked_at: number | null }
        | undefined;
      if (issuer && issuer.revoked_at !== null) return false;
      await this.db
        .prepare(
          `INSERT INTO admin_key (id, tenant, name, fingerprint, scopes, issuer, created_at, expires_at, revoked_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
        )
        .run(k.id, k.tenant, k.name, k.fingerprint, JSON.stringify(k.scopes), k.issuer, k.createdAt, k.expiresAt);
      return true;
    });
  }

  async byFingerprint(fingerprint: string): Promise<KeyRecord | null> {
    this.lookups++;
    const row = (await this.db.prepare('SELECT * FROM admin_key WHERE fingerprint = ?').get(fingerprint)) as Row | undefined;
    return row ? toRecord(row) : null;
  }

  async get(tenant: string, id: string): Promise<KeyRecord | null> {
    const row = (await this.db.prepare('SELECT * FROM admin_key WHERE tenant = ? AND id = ?').get(tenant, id)) as Row | undefined;
    return row ? toRecord(row) : null;
  }

  /** The tenant's keys, newest first, with their last use. */
  async list(tenant: string): Promise<(KeyRecord & { lastUsedAt: number | null })[]> {
    const rows = (await this.db
      .prepare(
        `SELECT k.*, u.last_used_at FROM admin_key k LEFT JOIN admin_key_usage u ON u.key_id = k.id
         WHERE k.tenant = ? ORDER BY k.created_at DESC, k.id`,
      )
      .all(tenant)) as Row[];
    return rows.map((r) => ({ ...toRecord(r), lastUsedAt: r.last_used_at ?? null }));
  }

  /**
   * Marks the key revoked (first revocation time kept), and every key it issued, directly
   * or through others: a key must not outlive, through keys it minted, its own revocation.
   * Returns the ids of the descendants revoked now; null when there is no such key.
   */
  revoke(tenant: string, id: string, now: number): Promise<string[] | null> {
    return this.db.transaction(async () => {
      const r = await this.db.prepare('UPDATE admin_key SET revoked_at = COALESCE(revoked_at, ?) WHERE tenant = ? AND id = ?').run(now, tenant, id);
      return r.changes > 0 ? this.revokeDescendants(tenant, id, now) : null;
    });
  }

  /** Deletes the key (and its usage row); the keys it issued are revoked, as on a revoke. */
  delete(tenant: string, id: string, now: number): Promise<boolean> {
    return this.db.transaction(async () => {
      const r = await this.db.prepare('DELETE FROM admin_key WHERE tenant = ? AND id = ?').run(tenant, id);
      if (r.changes === 0) return false; // another tenant's id: touch nothing of it
      await this.db.prepare('DELETE FROM admin_key_usage WHERE key_id = ?').run(id);
      await this.revokeDescendants(tenant, id, now);
      return true;
    });
  }

  private async revokeDescendants(tenant: string, id: string, now: number): Promise<string[]> {
    const ids = (
      (await this.db
        .prepare(
          `WITH RECURSIVE d(id) AS (
             SELECT id FROM admin_key WHERE tenant = ? AND issuer = ?
             UNION SELECT k.id FROM admin_key k JOIN d ON k.issuer = d.id WHERE k.tenant = ?
           ) SELECT k.id FROM admin_key k JOIN d ON k.id = d.id WHERE k.revoked_at IS NULL`,
        )
        .all(tenant, id, tenant)) as { id: string }[]
    ).map((r) => r.id);
    const stmt = this.db.prepare('UPDATE admin_key SET revoked_at = ? WHERE tenant = ? AND id = ?');
    for (const d of ids) await stmt.run(now, tenant, d);
    return ids;
  }

  /** One transaction for a batch of key id -> last use (ms). */
  async recordUse(batch: ReadonlyMap<string, number>): Promise<void> {
    if (batch.size === 0) return;
    const stmt = this.db.prepare(
      // Only for keys that still exist: a use noted just before a delete must not leave an orphan row.
      `INSERT INTO admin_key_usage (key_id, last_used_at) SELECT id, CAST(? AS BIGINT) FROM admin_key WHERE id = ?
       ON CONFLICT (key_id) DO UPDATE SET last_used_at = CASE WHEN excluded.last_used_at > admin_key_usage.last_used_at
         THEN excluded.last_used_at ELSE admin_key_usage.last_used_at END`,
    );
    // In id order: two nodes writing the same keys' uses lock their rows in one order (no deadlock).
    await this.db.transaction(async () => {
      for (const [id, at] of [...batch].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) await stmt.run(at, id);
    });
  }

  async lastUsedAt(id: string): Promise<number | null> {
    const row = (await this.db.prepare('SELECT last_used_at FROM admin_key_usage WHERE key_id = ?').get(id)) as { last_used_at: number } | undefined;
    return row?.last_used_at ?? null;
  }

  /** Deletes keys that expired before `before` (and their usage rows). Returns how many. */
  purgeExpired(before: number): Promise<number> {
    return this.db.transaction(async () => {
      await this.db.prepare('DELETE FROM admin_key_usage WHERE key_id IN (SELECT id FROM admin_key WHERE expires_at IS NOT NULL AND expires_at < ?)').run(before);
      return (await this.db.prepare('DELETE FROM admin_key WHERE expires_at IS NOT NULL AND expires_at < ?').run(before)).changes;
    });
  }
}
