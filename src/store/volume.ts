import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { migrate } from './migrations.js';
import type { FleetHooks, StoreDb } from '../contracts/store-db.js';
import { openPgVolume } from './pg/pg-volume.js';
import { isPgVolume, parsePgVolume } from '../shared/pg-volume-url.js';
import type { Logger } from '../shared/logger.js';
import { SqliteDb } from './sqlite-db.js';

export type Db = StoreDb;

export interface Volume {
  db: Db;
  /** Absolute file path, or null for memory: and postgres://. */
  file: string | null;
  /** What the volume is, for status and logs (a postgres:// URL without its password). */
  shown: string;
  /** Several nodes on one store (postgres://); null for SQLite, which one node holds. */
  fleet: (FleetHooks & { url: string; schema: string }) | null;
  /** A cheap query for the readiness check, each one bounded by `timeoutMs` (rejects when the store does not answer). */
  pinger(timeoutMs: number): StorePing;
  /** After the running transaction (SQLite) or every pooled connection's (PostgreSQL). */
  close(): Promise<void>;
}

export interface StorePing {
  ping(): Promise<void>;
  close(): void;
}

/** Resolves a volume spec to a file path (null for memory:). virtual:// paths are relative to baseDir. */
export function volumeFile(spec: string, baseDir: string): string | null {
  if (spec === 'memory:' || isPgVolume(spec)) return null;
  if (!spec.startsWith('virtual://')) throw new Error(`unknown volume kind: ${spec}`);
  const path = spec.slice('virtual://'.length);
  if (!path) throw new Error('virtual:// needs a path');
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

/**
 * Opens (creating if missing) and migrates a volume. Only the supervisor calls this.
 * A file volume is held exclusively for the process's life (SQLite's EXCLUSIVE locking
 * mode, taken by a first write at once): a second gateway on the same file is refused
 * instead of serving and publishing beside the first. That write also proves the volume
 * writable: a read-only one fails here (exit 10), not at the first `config set`.
 */
export async function openVolume(spec: string, baseDir: string, log?: Pick<Logger, 'warn' | 'info'>): Promise<Volume> {
  if (isPgVolume(spec)) {
    return await openPgVolume(spec, (down, cause) => (down ? log?.warn({ cause }, 'store: PostgreSQL cannot be reached; admin calls answer 503, traffic is served') : log?.info('store: PostgreSQL answers again')));
  }
  const file = volumeFile(spec, baseDir);
  if (file) mkdirSync(dirname(file), { recursive: true });
  const raw = new Database(file ?? ':memory:', { timeout: 2_000 });
  const db = new SqliteDb(raw);
  try {
    if (file) {
      raw.pragma('locking_mode = EXCLUSIVE'); // before WAL: the WAL index then lives in this process only
      raw.pragma('journal_mode = WAL');
      raw.pragma('synchronous = FULL');
    }
    raw.pragma('foreign_keys = ON');
    await migrate(db);
    if (file) {
      await db.exec('CREATE TABLE IF NOT EXISTS volume_owner (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, since TEXT NOT NULL)');
      await db.prepare('INSERT OR REPLACE INTO volume_owner (id, pid, since) VALUES (1, ?, ?)').run(process.pid, new Date().toISOString());
    }
  } catch (err) {
    raw.close();
    const code = (err as { code?: string }).code ?? '';
    if (code === 'SQLITE_BUSY') throw new Error(`volume ${file} is in use by another gateway (one gateway per volume)`);
    if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN') throw new Error(`volume ${file} cannot be written: ${(err as Error).message}`);
    throw err;
  }
  // In-process: a SQLite query cannot outlast its caller's bound unnoticed (the caller times it).
  // Held EXCLUSIVE, SQLite keeps its page cache across transactions and a read never reaches the
  // file: shrink_memory drops that cache, so the row is read from the database (or WAL) file.
  // 6 µs measured (shrink and read, a small volume), at most twice a second (StoreCheck).
  const schemaVersion = db.prepare('SELECT version FROM schema_version');
  const shrink = db.prepare('PRAGMA shrink_memory');
  const ping = async () => {
    await shrink.run(); // queued behind a running transaction, like any statement
    if ((await schemaVersion.get()) === undefined) throw new Error('the volume has no schema version row');
  };
  const pinger = (): StorePing => ({ ping, close: () => {} });
  return { db, file, shown: file ?? spec, fleet: null, pinger, close: () => db.close() };
}

/**
 * What `validate` can tell about a volume without taking it: null when `run` could open
 * it (memory:, a file not there yet, or a SQLite file nobody holds), else why not.
 */
export function checkVolume(spec: string, baseDir: string): string | null {
  const file = volumeFile(spec, baseDir);
  if (file === null || !existsSync(file)) return null;
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: 500 });
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return null;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_BUSY') return `volume ${file} is in use by another gateway (one gateway per volume)`;
    return `volume ${file} cannot be opened: ${(err as Error).message}`;
  } finally {
    db?.close();
  }
}

/** A volume spec as it may be shown (logs, errors): a postgres:// URL without anything secret in it. */
export function shownVolume(spec: string): string {
  if (!isPgVolume(spec)) return spec;
  try {
    return parsePgVolume(spec).shown;
  } catch {
    return 'postgres://(not a usable URL)';
  }
}
