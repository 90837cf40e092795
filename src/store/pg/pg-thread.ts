import { workerData, type MessagePort } from 'node:worker_threads';
import pg from 'pg';
import { ident } from './pg-url.js';

/**
 * The PostgreSQL volume's connection, in a thread of its own so the supervisor can wait for
 * an answer synchronously (sync-pg.ts). One client, one query at a time, in order; a lost
 * connection is made again on the next query, except inside a transaction, which fails
 * until it is rolled back (its earlier statements are gone with the connection).
 */
const { url, schema, signal, port } = workerData as { url: string; schema: string; signal: SharedArrayBuffer; port: MessagePort };
const counter = new Int32Array(signal);

// BIGINT (timestamps in ms, counts, ids) and NUMERIC (sums) as numbers, as SQLite returns them.
const asNumber = (v: string) => Number(v);
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 || oid === 1700 ? asNumber : pg.types.getTypeParser(oid, format as 'text')),
};

let client: pg.Client | null = null;
let broken = false;
let depth = 0;

async function connected(): Promise<pg.Client> {
  if (client) return client;
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000, types, application_name: 'switchyard' });
  c.on('error', () => lost(c));
  c.on('end', () => lost(c));
  await c.connect();
  await c.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
  await c.query(`SET search_path TO ${ident(schema)}`);
  client = c;
  return c;
}

function lost(c: pg.Client): void {
  if (client !== c) return;
  client = null;
  if (depth > 0) broken = true;
  c.end().catch(() => {});
}

interface Ask {
  id: number;
  sql: string;
  params: unknown[];
  /** 1: this statement opens a transaction, -1: it ends one. */
  tx?: 1 | -1;
}

port.on('message', (m: Ask) => {
  void answer(m).then((reply) => {
    port.postMessage(reply);
    Atomics.add(counter, 0, 1);
    Atomics.notify(counter, 0);
  });
});

async function answer(m: Ask): Promise<object> {
  if (m.tx === -1) depth = Math.max(0, depth - 1);
  try {
    if (broken) {
      if (m.tx === -1 && depth === 0) broken = false;
      throw Object.assign(new Error('the connection to PostgreSQL was lost inside a transaction'), { code: 'ECONNRESET' });
    }
    const c = await connected();
    // Without values a text may hold several statements (a migration); with them it is one.
    const r = m.params.length > 0 ? await c.query({ text: m.sql, values: m.params }) : await c.query(m.sql);
    if (m.tx === 1) depth++;
    const rows = Array.isArray(r) ? [] : r.rows;
    return { id: m.id, rows, changes: Array.isArray(r) ? 0 : (r.rowCount ?? 0) };
  } catch (err) {
    const e = err as { message?: string; code?: string };
    return { id: m.id, error: { message: e.message ?? String(err), code: e.code ?? '' } };
  }
}
