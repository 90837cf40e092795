import type { FleetHooks, StoreDb, StoreStatement } from '../../contracts/store-db.js';
import { numbered } from './pg-url.js';
import { SyncPg } from './sync-pg.js';

/** pg_advisory_xact_lock keys: publishes of every node, and schema migrations. */
const PUBLISH_LOCK = 0x5357_0001;
export const MIGRATE_LOCK = 0x5357_0002;
export const GENERATION_CHANNEL = 'switchyard_generation';

/**
 * The repositories' SQL on PostgreSQL, synchronously (SyncPg). Transactions nest as
 * better-sqlite3's do: the outermost is BEGIN/COMMIT, inner ones are savepoints.
 */
export class PgDb implements StoreDb, FleetHooks {
  private depth = 0;
  private readonly statements = new Map<string, StoreStatement>();

  constructor(readonly pg: SyncPg) {}

  prepare(sql: string): StoreStatement {
    let s = this.statements.get(sql);
    if (!s) {
      const text = numbered(sql);
      s = {
        run: (...p) => ({ changes: this.pg.query(text, p, undefined, this.depth).changes }),
        get: (...p) => this.pg.query(text, p, undefined, this.depth).rows[0],
        all: (...p) => this.pg.query(text, p, undefined, this.depth).rows,
      };
      this.statements.set(sql, s);
    }
    return s;
  }

  exec(sql: string): void {
    this.pg.query(sql, [], undefined, this.depth);
  }

  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    return (...args) => {
      const outer = this.depth === 0;
      const name = `sp${this.depth}`;
      this.pg.query(outer ? 'BEGIN' : `SAVEPOINT ${name}`, [], outer ? 1 : undefined, this.depth);
      this.depth++;
      let result: R;
      try {
        result = fn(...args);
      } catch (err) {
        this.depth--;
        try {
          this.pg.query(outer ? 'ROLLBACK' : `ROLLBACK TO SAVEPOINT ${name}`, [], outer ? -1 : undefined, this.depth + 1);
        } catch {
          // the connection is gone: the server rolled the transaction back itself
        }
        throw err;
      }
      this.depth--;
      if (outer) this.pg.query('COMMIT', [], -1, 1);
      else this.pg.query(`RELEASE SAVEPOINT ${name}`, [], undefined, this.depth + 1);
      return result;
    };
  }

  tryLockPublish(): boolean {
    return (this.pg.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [PUBLISH_LOCK], undefined, this.depth).rows[0] as { locked: boolean }).locked;
  }

  announce(generation: number): void {
    this.pg.query('SELECT pg_notify($1, $2)', [GENERATION_CHANNEL, String(generation)], undefined, this.depth);
  }

  close(): void {
    this.pg.close();
  }
}
