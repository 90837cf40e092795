/**
 * The SQL surface the repositories use, asynchronous on every volume: SQLite in-process
 * (store/sqlite-db.ts), PostgreSQL over a pool (store/pg/). SQL is written in the dialect
 * both read (`?` placeholders).
 */
export interface StoreStatement {
  run(...params: unknown[]): Promise<{ changes: number }>;
  get(...params: unknown[]): Promise<unknown>;
  all(...params: unknown[]): Promise<unknown[]>;
}

export interface TransactionOptions {
  tenant?: string;
}

export interface StoreDb {
  prepare(sql: string): StoreStatement;
  exec(sql: string): Promise<void>;
  /**
   * `fn` in one transaction: committed when its promise resolves, rolled back when it rejects.
   * Every statement issued from `fn`'s asynchronous context runs inside it; a transaction
   * started there is a savepoint. Nested ones run one after another, never concurrently.
   * `tenant` names the tenant whose writes it makes: a node's transactions of one tenant then
   * run one at a time, queued before they take a connection (a savepoint ignores it).
   */
  transaction<R>(fn: () => Promise<R>, opts?: TransactionOptions): Promise<R>;
  /**
   * Inside a transaction: waits until no other transaction holds the tenant's lock, and holds
   * it until this one ends (quotas: count, then write, one node and one call at a time).
   */
  lockTenant(tenant: string): Promise<void>;
  close(): Promise<void>;
}

/** What several gateway nodes on one database need beyond SQL (the postgres:// volume). */
export interface FleetHooks {
  /**
   * Serialises publishes across nodes, inside the caller's transaction: true when it now
   * holds the lock (until it ends), false at once when another node's publish holds it (the
   * caller gives its transaction up and tries again a little later).
   */
  tryLockPublish(): Promise<boolean>;
  /** Tells every node a generation was committed (delivered at commit). */
  announce(generation: number): Promise<void>;
}
