import type { Volume } from '../volume.js';
import { migrate } from '../migrations.js';
import { MIGRATE_LOCK, PgDb } from './pg-db.js';
import { parsePgVolume } from '../../shared/pg-volume-url.js';
import { PgPing } from './pg-ping.js';

/**
 * A postgres:// volume: the schema made and migrated (one node at a time), shared by every
 * node that names it. Not held exclusively, unlike a SQLite file: that is its purpose.
 */
export async function openPgVolume(spec: string, onState?: (down: boolean, cause: string) => void): Promise<Volume> {
  const { url, schema, shown } = parsePgVolume(spec);
  const db = new PgDb(url, schema, undefined, onState);
  try {
    await db.ensureSchema();
    await migrate(db, 'postgres', async () => void (await db.prepare('SELECT pg_advisory_xact_lock(?)').get(MIGRATE_LOCK)));
  } catch (err) {
    await db.close();
    throw new Error(`volume ${shown} cannot be opened: ${(err as Error).message}`);
  }
  return {
    db,
    file: null,
    shown,
    fleet: { url, schema, tryLockPublish: () => db.tryLockPublish(), announce: (g) => db.announce(g) },
    pinger: (timeoutMs) => new PgPing(url, schema, timeoutMs),
    close: () => db.close(),
  };
}
