import pg from 'pg';
import { createHash } from 'node:crypto';
import type { FleetHooks, StoreDb, StoreStatement, TransactionOptions } from '../../contracts/store-db.js';
import { ident, numbered } from './pg-url.js';
import { pgTypes } from './pg-client.js';
import { TxScope } from '../tx-scope.js';
import { PgHealth, busy } from './pg-health.js';
import { TenantQueue } from '../tenant-queue.js';

/** pg_advisory_xact_lock keys (the one-bigint key space): publishes of every node, and schema migrations. */
const PUBLISH_LOCK = 0x5357_0001;
export const MIGRATE_LOCK = 0x5357_0002;
/** A tenant's lock is the two-int key (TENANT_LOCKS, hash of the name): PostgreSQL keeps that space apart from the one-bigint keys. */
const TENANT_LOCKS = 0x5357_0003;
export const GENERATION_CHANNEL = 'switchyard_generation';

/**
 * The repositories' SQL on PostgreSQL over a pool, asynchronously. A transaction holds one
 * client for its life and every statement of its asynchronous context runs on it; nested
 * ones are savepoints. Statements outside transactions take any pooled client. Every
 * statement is bounded by the server (statement_timeout, lock_timeout) and by the client
 * (query_timeout); a connection in doubt is dropped, not pooled again.
 */
export class PgDb implements StoreDb, FleetHooks {
  private readonly pool: pg.Pool;
  private readonly scope = new TxScope<pg.PoolClient>();
  private readonly health: PgHealth;
  private readonly texts = new Map<string, string>();
  /** Clients whose connection is in doubt: destroyed when released. */
  private readonly inDoubt = new WeakSet<pg.PoolClient>();
  /** A tenant's writes wait here, not on a pooled connection blocked on the tenant's lock. */
  readonly tenants = new TenantQueue();
  /** The bound on waiting for a connection; a tenant's queue wait counts against it. */
  private readonly connectWaitMs: number;

  constructor(
    url: string,
    readonly schema: string,
    timeoutMs = 3_000,
    onState: (down: boolean, cause: string) => void = () => {},
  ) {
    this.health = new PgHealth(url, timeoutMs, onState);
    this.connectWaitMs = Math.min(2_000, timeoutMs);
    // Session settings in the startup packet: no round trip per new connection. The schema name is [a-z0-9_] (pg-volume-url.ts).
    const options = `-c search_path=${schema} -c statement_timeout=${timeoutMs} -c lock_timeout=${Math.min(2_000, timeoutMs)}`;
    this.pool = new pg.Pool({
      connectionString: url,
      max: 10,
      connectionTimeoutMillis: this.connectWaitMs,
      query_timeout: timeoutMs + 1_000,
      keepAlive: true,
      types: pgTypes,
      application_name: 'switchyard',
      options,
    });
    this.pool.on('error', () => {}); // an idle client lost: the pool drops it, the next use connects again
    // A client's connection lost while checked out (between a transaction's statements) is an
    // 'error' event pg-pool does not listen for then: unheard, it would end the process.
    this.pool.on('connect', (c) => c.on('error', () => this.inDoubt.add(c)));
  }

  /** Made here only when missing: CREATE SCHEMA needs a privilege a role that owns a ready schema may lack. */
  async ensureSchema(): Promise<void> {
    const has = await this.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.schema]);
    if (has.rowCount !== 0) return;
    await this.query(`CREATE SCHEMA IF NOT EXISTS ${ident(this.schema)}`, []).catch((e: { code?: string }) => {
      if (e.code !== '23505' && e.code !== '42P06') throw e; // another node made it meanwhile
    });
  }

  prepare(sql: string): StoreStatement {
    let text = this.texts.get(sql);
    if (text === undefined) this.texts.set(sql, (text = numbered(sql)));
    const t = text;
    return {
      run: async (...p) => ({ changes: (await this.query(t, p)).rowCount ?? 0 }),
      get: async (...p) => (await this.query(t, p)).rows[0],
      all: async (...p) => (await this.query(t, p)).rows,
    };
  }

  async exec(sql: string): Promise<void> {
    await this.query(sql, []);
  }

  async transaction<R>(fn: () => Promise<R>, opts?: TransactionOptions): Promise<R> {
    const frame = this.scope.current();
    // A savepoint never queues: its transaction already holds the turn (taking it again would deadlock).
    if (frame) return this.scope.savepoint(frame, (sql) => this.send(frame.conn, sql, []).then(() => {}), fn);
    if (opts?.tenant === undefined) return this.open(fn, this.connectWaitMs);
    this.health.refuseWhileDown();
    const start = performance.now();
    const leave = await this.tenants.enter(opts.tenant, this.connectWaitMs, busy);
    try {
      return await this.open(fn, this.connectWaitMs - (performance.now() - start));
    } finally {
      leave();
    }
  }

  /** `fn` in a new transaction on a pooled client, waiting at most `waitMs` for one. */
  private async open<R>(fn: () => Promise<R>, waitMs: number): Promise<R> {
    const c = await this.checkout(waitMs);
    try {
      await this.send(c, 'BEGIN', []);
      let r: R;
      try {
        r = await this.scope.run(c, fn);
      } catch (err) {
        // A lost connection took its transaction with it: the server rolled it back.
        if (!this.inDoubt.has(c)) await c.query('ROLLBACK').catch(() => this.inDoubt.add(c));
        throw err;
      }
      await this.send(c, 'COMMIT', []);
      return r;
    } finally {
      c.release(this.inDoubt.has(c));
    }
  }

  async lockTenant(tenant: string): Promise<void> {
    if (!this.scope.current()) throw new Error('lockTenant outside a transaction');
    await this.query('SELECT pg_advisory_xact_lock($1, $2)', [TENANT_LOCKS, tenantKey(tenant)]);
  }

  async tryLockPublish(): Promise<boolean> {
    if (!this.scope.current()) throw new Error('tryLockPublish outside a transaction');
    return ((await this.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [PUBLISH_LOCK])).rows[0] as { locked: boolean }).locked;
  }

  async announce(generation: number): Promise<void> {
    await this.query('SELECT pg_notify($1, $2)', [GENERATION_CHANNEL, String(generation)]);
  }

  async close(): Promise<void> {
    this.health.close();
    await this.pool.end().catch(() => {});
  }

  /** In the caller's transaction when it has one, else on a pooled client for this statement alone. */
  private async query(text: string, params: readonly unknown[]): Promise<pg.QueryResult> {
    const frame = this.scope.current();
    if (frame) {
      this.health.refuseWhileDown();
      return this.send(frame.conn, text, params);
    }
    const c = await this.checkout();
    try {
      return await this.send(c, text, params);
    } finally {
      c.release(this.inDoubt.has(c));
    }
  }

  /** A pooled client; known down: refused at once, so a stopped or unreachable server never holds a caller. */
  private async checkout(waitMs = this.connectWaitMs): Promise<pg.PoolClient> {
    this.health.refuseWhileDown();
    try {
      return waitMs >= this.connectWaitMs ? await this.pool.connect() : await connectWithin(this.pool, waitMs);
    } catch (err) {
      throw this.health.classify(err).error;
    }
  }

  private async send(c: pg.PoolClient, text: string, params: readonly unknown[]): Promise<pg.QueryResult> {
    try {
      // Without values a text may hold several statements (a migration); with them it is one.
      return params.length > 0 ? await c.query({ text, values: params.map(param) }) : await c.query(text);
    } catch (err) {
      const { error, inDoubt } = this.health.classify(err);
      if (inDoubt) this.inDoubt.add(c);
      throw error;
    }
  }
}

/** A pooled client within `waitMs` (less than the pool's own bound), else busy; one that comes later goes back to the pool. */
function connectWithin(pool: pg.Pool, waitMs: number): Promise<pg.PoolClient> {
  const pending = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      pending.then((c) => c.release(), () => {});
      reject(busy());
    }, Math.max(0, waitMs));
  });
  return Promise.race([pending, late]).finally(() => clearTimeout(timer));
}

/** A tenant's name as the second int of its lock key. */
function tenantKey(tenant: string): number {
  return createHash('sha256').update(tenant).digest().readInt32BE(0);
}

/** better-sqlite3 takes booleans as integers and bigints as numbers; pg is given the same values. */
function param(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return v.toString();
  return v;
}
