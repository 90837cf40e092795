import pg from 'pg';
import { SvcError } from '../../shared/errors.js';
import { isSqlError } from './pg-client.js';

/** What a caller is told (the cause, which may name hosts, goes to the log only). */
export const unavailable = () => new SvcError('Svc.Store.Unavailable', 'The store (PostgreSQL) cannot be reached; the gateway tries again every 0.5 s');
export const busy = () => new SvcError('Svc.Store.Unavailable', 'The store (PostgreSQL) is busy; try again');

/** Every connection of the pool is held and none was given back within the connect bound (pg-pool's words). */
const POOL_WAIT = 'timeout exceeded when trying to connect';

/**
 * Whether the PostgreSQL volume's server can be reached. A connection failure (not an SQL
 * error) marks it down: statements are then refused at once instead of each waiting its
 * bound, and one cheap connection is tried every half second, off the pool, until one works.
 * Each transition is told once (onState).
 */
export class PgHealth {
  down = false;
  private timer: NodeJS.Timeout | null = null;
  private probing = false;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly onState: (down: boolean, cause: string) => void,
  ) {}

  refuseWhileDown(): void {
    if (this.down) throw unavailable();
  }

  /**
   * The error a caller gets for `err` from pg: an SQL error as itself (busy ones, 503), anything
   * else 503 and, unless it was only a wait for a pooled connection, the store marked down.
   * Returns whether the connection it came from is in doubt (to be dropped, not pooled).
   */
  classify(err: unknown): { error: Error; inDoubt: boolean } {
    const e = err as { message?: string; code?: string };
    if (err instanceof SvcError) return { error: err, inDoubt: false };
    if (isSqlError(e.code)) return { error: failure({ message: e.message ?? String(err), code: e.code! }), inDoubt: false };
    if (e.message === POOL_WAIT) return { error: busy(), inDoubt: false };
    this.fail(e.message ?? String(err));
    return { error: unavailable(), inDoubt: true };
  }

  private fail(cause: string): void {
    if (this.down) return;
    this.down = true;
    this.onState(true, cause);
    this.timer = setInterval(() => void this.probe(), 500);
    this.timer.unref();
  }

  private async probe(): Promise<void> {
    if (this.probing || !this.down) return;
    this.probing = true;
    const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: Math.min(2_000, this.timeoutMs), query_timeout: this.timeoutMs, application_name: 'switchyard-recheck' });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.query('SELECT 1');
      this.up();
    } catch {
      // still down: the next tick tries again
    } finally {
      this.probing = false;
      c.end().catch(() => {});
    }
  }

  private up(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.down = false;
    this.onState(false, '');
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** An SQL error: busy (a lock or statement timeout, a deadlock, a serialization failure) is 503, anything else a fault. */
function failure(e: { message: string; code: string }): Error {
  // Class 53 (insufficient resources: too many connections, disk full, out of memory) passes too.
  if (/^(55P03|57014|40P01|40001|53[0-9A-Z]{3})$/.test(e.code)) return busy();
  return Object.assign(new Error(e.message), { code: e.code });
}
