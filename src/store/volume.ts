import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { migrate } from './migrations.js';

export type Db = Database.Database;

export interface Volume {
  db: Db;
  /** Absolute file path, or null for memory:. */
  file: string | null;
  close(): void;
}

/** Resolves a volume spec to a file path (null for memory:). virtual:// paths are relative to baseDir. */
export function volumeFile(spec: string, baseDir: string): string | null {
  if (spec === 'memory:') return null;
  if (!spec.startsWith('virtual://')) throw new Error(`unknown volume kind: ${spec}`);
  const path = spec.slice('virtual://'.length);
  if (!path) throw new Error('virtual:// needs a path');
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

/** Opens (creating if missing) and migrates a volume. Only the supervisor calls this. */
export function openVolume(spec: string, baseDir: string): Volume {
  const file = volumeFile(spec, baseDir);
  if (file) mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file ?? ':memory:');
  if (file) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
  }
  db.pragma('foreign_keys = ON');
  migrate(db);
  return { db, file, close: () => db.close() };
}
