import type Database from 'better-sqlite3';
import type { StoreDb, StoreStatement, TransactionOptions } from '../contracts/store-db.js';
import { Mutex, TxScope } from './tx-scope.js';

/**
 * A SQLite volume behind the asynchronous store contract, in-process: a statement costs
 * microseconds and runs at once; only a commit's fsync is felt (0.2 ms median, 9 ms at most, measured on a 2-vCPU VM).
 * One connection, so a transaction is exclusive: it holds a FIFO lock for its life, and a
 * statement from outside it waits for it to end instead of landing in it.
 */
export class SqliteDb implements StoreDb {
  private readonly scope = new TxScope<true>();
  private readonly lock = new Mutex();
  private readonly statements = new Map<string, Database.Statement>();

  constructor(readonly raw: Database.Database) {}

  prepare(sql: string): StoreStatement {
    const st = () => {
      let s = this.statements.get(sql);
      if (!s) this.statements.set(sql, (s = this.raw.prepare(sql)));
      return s;
    };
    return {
      run: (...p) => this.call(() => ({ changes: st().run(...p).changes })),
      get: (...p) => this.call(() => st().get(...p)),
      all: (...p) => this.call(() => st().all(...p)),
    };
  }

  exec(sql: string): Promise<void> {
    return this.call(() => void this.raw.exec(sql));
  }

  /** The tenant option is not needed: one connection, every transaction exclusive already. */
  async transaction<R>(fn: () => Promise<R>, _opts?: TransactionOptions): Promise<R> {
    const frame = this.scope.current();
    if (frame) return this.scope.savepoint(frame, async (sql) => void this.raw.exec(sql), fn);
    const release = await this.lock.lock();
    try {
      this.raw.exec('BEGIN');
      try {
        const r = await this.scope.run(true, fn);
        this.raw.exec('COMMIT');
        return r;
      } catch (err) {
        // A failed COMMIT (a full disk, an I/O error) too: the connection must leave the transaction.
        if (this.raw.inTransaction) this.raw.exec('ROLLBACK');
        throw err;
      }
    } finally {
      release();
    }
  }

  /** The one connection's transactions never overlap: holding one is holding every tenant's lock. */
  async lockTenant(): Promise<void> {
    if (!this.scope.current()) throw new Error('lockTenant outside a transaction');
  }

  async close(): Promise<void> {
    const release = await this.lock.lock();
    try {
      if (this.raw.open) this.raw.close();
    } finally {
      release();
    }
  }

  /** In the caller's transaction, or when none runs: now. Else after the running one (and those queued before). */
  private async call<T>(f: () => T): Promise<T> {
    if (this.scope.current() || !this.lock.held) return f();
    const release = await this.lock.lock();
    try {
      return f();
    } finally {
      release();
    }
  }
}
