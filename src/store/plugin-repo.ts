import type { Db } from './volume.js';

/** Which step codes each tenant disabled. Every code is enabled until disabled. */
export class PluginRepo {
  constructor(private readonly db: Db) {}

  async setEnabled(tenant: string, code: string, enabled: boolean, now = Date.now()): Promise<void> {
    await this.db
      .prepare(
        `INSERT INTO plugin_state (tenant, code, enabled, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (tenant, code) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
      )
      .run(tenant, code, enabled ? 1 : 0, now);
  }

  async disabled(tenant: string): Promise<Set<string>> {
    const rows = (await this.db.prepare('SELECT code FROM plugin_state WHERE tenant = ? AND enabled = 0').all(tenant)) as { code: string }[];
    return new Set(rows.map((r) => r.code));
  }

  /** tenant -> disabled codes, for every tenant that disabled any. */
  async allDisabled(): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const r of (await this.db.prepare('SELECT tenant, code FROM plugin_state WHERE enabled = 0').all()) as { tenant: string; code: string }[]) {
      (out[r.tenant] ??= []).push(r.code);
    }
    return out;
  }
}
