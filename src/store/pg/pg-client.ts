import pg from 'pg';
import { ident } from './pg-url.js';

// BIGINT (timestamps in ms, counts, ids) and NUMERIC (sums) as numbers, as SQLite returns them.
const asNumber = (v: string) => Number(v);
export const pgTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 || oid === 1700 ? asNumber : pg.types.getTypeParser(oid, format as 'text')),
};

/** An SQL error has a five-character SQLSTATE outside the connection classes (08, 57P); anything else means the connection is in doubt. */
export function isSqlError(code: string | undefined): boolean {
  return /^[0-9A-Z]{5}$/.test(code ?? '') && !/^(08|57P)/.test(code ?? '');
}

/**
 * A connected client on the volume's schema: numbers as SQLite gives them, every query
 * bounded, TCP keep-alive. `setup` runs before the schema is made the search path (the
 * store's session settings, the follower's LISTEN); a client that fails on the way is closed.
 */
export async function connectPg(
  url: string,
  schema: string,
  o: { applicationName: string; queryTimeoutMs: number; lost: (c: pg.Client) => void; setup?: (c: pg.Client) => Promise<void> },
): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: Math.min(2_000, o.queryTimeoutMs), query_timeout: o.queryTimeoutMs, keepAlive: true, types: pgTypes, application_name: o.applicationName });
  c.on('error', () => o.lost(c));
  c.on('end', () => o.lost(c));
  try {
    await c.connect();
    await o.setup?.(c);
    await c.query(`SET search_path TO ${ident(schema)}`);
    return c;
  } catch (err) {
    c.end().catch(() => {});
    throw err;
  }
}
