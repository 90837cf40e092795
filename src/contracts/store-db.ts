/**
 * The SQL surface the repositories use: better-sqlite3's synchronous API, which the SQLite
 * volumes are, and which the PostgreSQL volume provides over a connection in a thread of
 * its own (store/pg/). SQL is written in the dialect both read (`?` placeholders).
 */
export interface StoreStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

export interface StoreDb {
  prepare(sql: string): StoreStatement;
  exec(sql: string): void;
  /** `fn` in one transaction (a savepoint when nested): committed when it returns, rolled back when it throws. */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  close(): void;
}

/** What several gateway nodes on one database need beyond SQL (the postgres:// volume). */
export interface FleetHooks {
  /**
   * Serialises publishes across nodes: true when this transaction now holds the lock (until it
   * ends), false at once when another node's publish holds it (the caller waits asynchronously
   * and tries again: a synchronous wait would hold the supervisor).
   */
  tryLockPublish(): boolean;
  /** Tells every node a generation was committed (delivered at commit). */
  announce(generation: number): void;
}
