import type { Database } from 'better-sqlite3';

/**
 * Versioned schema. Append only: a shipped migration is never edited, a change is a
 * new entry, so a volume written by any release opens in every later one.
 */
const MIGRATIONS: string[] = [
  // 1: entities, generations, keys, key usage
  `
  CREATE TABLE entity_draft (
    tenant TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
    doc TEXT,                       -- NULL: a staged delete
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, kind, name)
  );
  CREATE TABLE entity_published (
    tenant TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
    doc TEXT NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (tenant, kind, name)
  );
  CREATE TABLE generation (
    id INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL,
    action TEXT NOT NULL,           -- publish | rollback
    planned TEXT NOT NULL,          -- JSON array of kind/name
    payload TEXT NOT NULL,          -- the compiled generation, as sent to workers
    published TEXT NOT NULL,        -- JSON snapshot of every published entity, for rollback
    created_at INTEGER NOT NULL
  );
  CREATE TABLE admin_key (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    name TEXT NOT NULL,
    fingerprint TEXT NOT NULL UNIQUE, -- SHA-256 of the plaintext; the plaintext is never stored
    scopes TEXT NOT NULL,
    issuer TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER
  );
  CREATE TABLE admin_key_usage (
    key_id TEXT PRIMARY KEY,
    last_used_at INTEGER NOT NULL
  );
  `,
  // 2: plugin lifecycle per tenant (absent row: enabled)
  `
  CREATE TABLE plugin_state (
    tenant TEXT NOT NULL, code TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, code)
  );
  `,
  // 3: the audit trail of admin writes; sub-keys listed per tenant
  `
  CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    identity_id TEXT,
    identity_kind TEXT,
    tenant TEXT,
    operation TEXT NOT NULL,
    target TEXT,
    status INTEGER NOT NULL,
    trace_id TEXT NOT NULL,
    generation INTEGER
  );
  CREATE INDEX audit_log_tenant ON audit_log (tenant, id);
  CREATE INDEX admin_key_tenant ON admin_key (tenant, created_at);
  `,
];

export function migrate(db: Database): number {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const row = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
  let version = row?.version ?? 0;
  if (version > MIGRATIONS.length) {
    throw new Error(`volume schema version ${version} is newer than this release (${MIGRATIONS.length})`);
  }
  const apply = db.transaction((from: number) => {
    for (let i = from; i < MIGRATIONS.length; i++) db.exec(MIGRATIONS[i] as string);
    db.prepare('DELETE FROM schema_version').run();
    db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(MIGRATIONS.length);
  });
  if (version < MIGRATIONS.length) {
    apply(version);
    version = MIGRATIONS.length;
  }
  return version;
}
