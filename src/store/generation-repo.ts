import type { Db } from './volume.js';
import type { EntityRow } from '../contracts/entities.js';
import type { GenerationMessage } from '../contracts/ipc.js';
import type { CompiledGeneration } from '../contracts/generation.js';

export interface GenerationRecord {
  generation: number;
  tenant: string;
  action: 'publish' | 'rollback';
  planned: string[];
  createdAt: string;
}

/** Numbered generations: the compiled payload workers load, and the tenant's published state for rollback. */
export class GenerationRepo {
  /** `keep`: how many of each tenant's newest generations are kept (history and rollback). */
  constructor(
    private readonly db: Db,
    readonly keep = 50,
  ) {}

  async current(): Promise<number> {
    const r = (await this.db.prepare('SELECT MAX(id) AS id FROM generation').get()) as { id: number | null };
    return r.id ?? 0;
  }

  /** The generation workers must serve, or null before the first publish. */
  async latest(): Promise<GenerationMessage | null> {
    const r = (await this.db.prepare('SELECT id, payload FROM generation ORDER BY id DESC LIMIT 1').get()) as { id: number; payload: string } | undefined;
    // The row holds what insert() wrote: a CompiledGeneration as JSON.
    return r ? { id: r.id, payload: JSON.parse(r.payload) as CompiledGeneration } : null;
  }

  async insert(g: { id: number; tenant: string; action: 'publish' | 'rollback'; planned: string[]; payload: CompiledGeneration; published: EntityRow[] }, now = Date.now()): Promise<void> {
    await this.db
      .prepare('INSERT INTO generation (id, tenant, action, planned, payload, published, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(g.id, g.tenant, g.action, JSON.stringify(g.planned), JSON.stringify(g.payload), JSON.stringify(g.published), now);
    // Only the latest payload is ever loaded (a rollback recompiles from `published`):
    // older ones would only grow the volume, and a memory: volume's RAM, by a whole
    // compiled generation per publish.
    await this.db.prepare("UPDATE generation SET payload = 'null' WHERE id < ? AND payload != 'null'").run(g.id);
    await this.prune(g.tenant);
  }

  /**
   * Drops the tenant's generations beyond its newest `keep`: each holds the tenant's
   * whole published state, so without this the volume grows by that much per publish.
   * The newest generation overall (the one serving) is always among its tenant's kept.
   */
  private async prune(tenant: string): Promise<void> {
    await this.db
      .prepare('DELETE FROM generation WHERE tenant = ? AND id < (SELECT MIN(id) FROM (SELECT id FROM generation WHERE tenant = ? ORDER BY id DESC LIMIT ?) AS kept)')
      .run(tenant, tenant, this.keep);
  }

  /** True when `id` may have been a generation of the tenant that pruning has dropped. */
  async pruned(tenant: string, id: number): Promise<boolean> {
    const r = (await this.db.prepare('SELECT COUNT(*) AS n, MIN(id) AS oldest FROM generation WHERE tenant = ?').get(tenant)) as { n: number; oldest: number | null };
    return r.n >= this.keep && r.oldest !== null && id < r.oldest;
  }

  async history(tenant: string, limit = 100): Promise<GenerationRecord[]> {
    const rows = (await this.db
      .prepare('SELECT id, tenant, action, planned, created_at FROM generation WHERE tenant = ? ORDER BY id DESC LIMIT ?')
      .all(tenant, limit)) as { id: number; tenant: string; action: 'publish' | 'rollback'; planned: string; created_at: number }[];
    return rows.map((r) => ({
      generation: r.id,
      tenant: r.tenant,
      action: r.action,
      planned: JSON.parse(r.planned),
      createdAt: new Date(r.created_at).toISOString(),
    }));
  }

  /** The tenant's published entities as generation `id` left them, or null if `id` is not that tenant's. */
  async tenantState(tenant: string, id: number): Promise<EntityRow[] | null> {
    const r = (await this.db.prepare('SELECT published FROM generation WHERE id = ? AND tenant = ?').get(id, tenant)) as { published: string } | undefined;
    return r ? JSON.parse(r.published) : null;
  }
}
