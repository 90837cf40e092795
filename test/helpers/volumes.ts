import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openVolume, type Volume } from '../../src/store/volume.js';

/** The three volume kinds the store's own tests run on. */
export const VOLUME_KINDS = ['memory', 'virtual', 'postgres'] as const;
export type VolumeKind = (typeof VOLUME_KINDS)[number];

/** The machine's PostgreSQL (trust auth, database `test`); PGHOST/PGPORT/PGDATABASE move it. */
export function pgVolumeUrl(schema: string): string {
  const host = process.env.PGHOST ?? '127.0.0.1';
  const port = process.env.PGPORT ?? '5432';
  return `postgres://${process.env.PGUSER ?? 'postgres'}@${host}:${port}/${process.env.PGDATABASE ?? 'test'}?schema=${schema}`;
}

let n = 0;
/** A schema name no other test run uses. */
export function freshSchema(): string {
  return `sy_t${process.pid}_${Date.now().toString(36)}_${++n}`;
}

/** An empty volume of `kind`, closed (and its schema or file removed) when the test ends. */
export async function freshVolume(t: { after(fn: () => void | Promise<void>): void }, kind: VolumeKind): Promise<Volume> {
  if (kind === 'memory') {
    const v = await openVolume('memory:', '/');
    t.after(() => v.close());
    return v;
  }
  if (kind === 'virtual') {
    const dir = mkdtempSync(join(tmpdir(), 'sy-vol-'));
    const v = await openVolume('virtual://store.db', dir);
    t.after(async () => {
      await v.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return v;
  }
  const schema = freshSchema();
  const v = await openVolume(pgVolumeUrl(schema), '/');
  t.after(async () => {
    await v.db.exec(`DROP SCHEMA ${schema} CASCADE`);
    await v.close();
  });
  return v;
}
