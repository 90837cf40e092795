import pg from 'pg';
import { hostname } from 'node:os';
import type { GenerationMessage } from '../contracts/ipc.js';
import type { CompiledGeneration } from '../contracts/generation.js';
import type { Logger } from '../shared/logger.js';
import { GENERATION_CHANNEL } from '../store/pg/pg-db.js';
import { connectPg, isSqlError } from '../store/pg/pg-client.js';
import type { FleetNode } from '../contracts/node-status.js';
import type { FleetView } from '../admin/services.js';



interface Follows {
  currentId(): number;
  follow(gen: GenerationMessage): Promise<void>;
}

/**
 * One node of several on a postgres:// volume. It LISTENs for committed generations and
 * polls every `pollMs` as well (a notification lost with a connection), loads a newer
 * generation than it serves and hands it to the publisher; each poll is also its heartbeat
 * row. Its own connection, off the store's pool: waiting on the fleet never takes a
 * connection an admin call needs.
 */
export class FleetFollower implements FleetView {
  readonly nodeId = `${hostname()}:${process.pid}:${Date.now().toString(36)}`;
  private client: Promise<pg.Client> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  /** A check was asked for while one ran. */
  private again = false;
  private readonly startedAt = Date.now();
  private stopped = false;
  /** The store was unreachable at the last tick: said once, and once again when it is back. */
  private down = false;
  /** One query at a time on the follower's connection (pg queues them, but will stop doing so). */
  private queue: Promise<unknown> = Promise.resolve();
  private ticks = 0;

  constructor(
    private readonly db: { url: string; schema: string },
    private readonly publisher: Follows,
    private readonly admin: string,
    private readonly log: Logger,
    private readonly pollMs = 1_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.pollMs);
    this.timer.unref();
    void this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    const c = await this.client?.catch(() => null);
    if (c) {
      // Bounded by the client's query_timeout: a silent store never holds the shutdown.
      await this.run('DELETE FROM fleet_node WHERE id = $1', [this.nodeId]).catch(() => {});
      await c.end().catch(() => {});
    }
    this.client = null;
  }

  /** Every node that heartbeat within the last minute, this one marked. */
  async nodes(): Promise<FleetNode[]> {
    const r = await this.run('SELECT id, admin, generation, started_at, seen_at FROM fleet_node WHERE seen_at > $1 ORDER BY started_at, id', [Date.now() - 60_000]);
    return r.rows.map((n: { id: string; admin: string; generation: number; started_at: number; seen_at: number }) => ({
      id: n.id,
      admin: n.admin,
      generation: n.generation,
      startedAt: new Date(n.started_at).toISOString(),
      seenAt: new Date(n.seen_at).toISOString(),
      self: n.id === this.nodeId,
    }));
  }

  private async tick(): Promise<void> {
    try {
      await this.check();
      await this.run(
        `INSERT INTO fleet_node (id, admin, generation, started_at, seen_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id) DO UPDATE SET generation = excluded.generation, seen_at = excluded.seen_at`,
        [this.nodeId, this.admin, this.publisher.currentId(), this.startedAt, Date.now()],
      );
      // The rows of nodes that died without saying so go after a day.
      if (++this.ticks % 600 === 1) await this.run('DELETE FROM fleet_node WHERE seen_at < $1', [Date.now() - 86_400_000]);
      if (this.down) this.log.info({ generation: this.publisher.currentId() }, 'fleet: the store is back');
      this.down = false;
    } catch (err) {
      if (!this.down && !this.stopped) this.log.warn({ err: (err as Error).message, generation: this.publisher.currentId() }, 'fleet: the store cannot be reached; serving the last generation');
      this.down = true;
    }
  }

  /**
   * Loads and serves the newest generation when it is newer than the one served (one check at a
   * time). A notification during a check runs another after it: the running one may have read
   * before that commit, and the poll would find it only a second later.
   */
  private check(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return this.checking;
    }
    this.checking = (async () => {
      try {
        do {
          this.again = false;
          const r = await this.run('SELECT id, payload FROM generation WHERE id > $1 ORDER BY id DESC LIMIT 1', [this.publisher.currentId()]);
          const row = r.rows[0] as { id: number; payload: string } | undefined;
          if (row) await this.publisher.follow({ id: row.id, payload: JSON.parse(row.payload) as CompiledGeneration });
        } while (this.again && !this.stopped);
      } finally {
        this.checking = null;
      }
    })();
    return this.checking;
  }

  /** A query on the follower's connection, after the one before it; a failure gives the connection up (the next one makes another). */
  private run(sql: string, params: unknown[]): Promise<pg.QueryResult> {
    const next = this.queue.then(async () => {
      const c = await this.connected();
      try {
        return await c.query(sql, params);
      } catch (err) {
        if (!isSqlError((err as { code?: string }).code)) this.forget(c);
        throw err;
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  private forget(c: pg.Client): void {
    void this.client?.then((mine) => {
      if (mine === c) this.client = null;
    }, () => {});
    c.end().catch(() => {});
  }

  private connected(): Promise<pg.Client> {
    if (this.stopped) return Promise.reject(new Error('stopped'));
    this.client ??= this.connect().catch((err: unknown) => {
      this.client = null;
      throw err;
    });
    return this.client;
  }

  private connect(): Promise<pg.Client> {
    // Every query bounded: a silent connection must not hold the follower, the status or the shutdown.
    return connectPg(this.db.url, this.db.schema, {
      applicationName: 'switchyard-fleet',
      queryTimeoutMs: 2_000,
      lost: (lost) => this.forget(lost),
      setup: async (c) => {
        c.on('notification', () => void this.check().catch(() => {}));
        await c.query(`LISTEN ${GENERATION_CHANNEL}`);
      },
    });
  }
}
