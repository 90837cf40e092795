import { workerData, type MessagePort } from 'node:worker_threads';
import pg from 'pg';
import { ident } from './pg-url.js';
import { ANSWERS, DOWN } from './signal.js';

/**
 * The PostgreSQL volume's connection, in a thread of its own so the supervisor can wait for
 * an answer synchronously (sync-pg.ts). One client, one query at a time, in order. A lost
 * connection (or a query over the time limit) raises the shared DOWN flag and is made again
 * in the background every half second; the flag drops once it works, so meanwhile the
 * supervisor refuses store calls at once instead of waiting on each. A transaction whose
 * connection was lost fails until it is rolled back (its statements went with it).
 */
const { url, schema, signal, port, timeoutMs } = workerData as { url: string; schema: string; signal: SharedArrayBuffer; port: MessagePort; timeoutMs: number };
const shared = new Int32Array(signal);

// BIGINT (timestamps in ms, counts, ids) and NUMERIC (sums) as numbers, as SQLite returns them.
const asNumber = (v: string) => Number(v);
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 || oid === 1700 ? asNumber : pg.types.getTypeParser(oid, format as 'text')),
};

let client: pg.Client | null = null;
let broken = false;
let depth = 0;
let reconnecting: NodeJS.Timeout | null = null;

async function connect(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: Math.min(2_000, timeoutMs), query_timeout: timeoutMs, keepAlive: true, types, application_name: 'switchyard' });
  c.on('error', () => lost(c));
  c.on('end', () => lost(c));
  await c.connect();
  await c.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
  await c.query(`SET search_path TO ${ident(schema)}`);
  return c;
}

async function connected(): Promise<pg.Client> {
  client ??= await connect();
  Atomics.store(shared, DOWN, 0);
  return client;
}

function lost(c: pg.Client): void {
  if (client !== c) return;
  client = null;
  if (depth > 0) broken = true;
  c.end().catch(() => {});
  down();
}

/** Gives up the connection (a transaction on it is lost) and goes down until a new one works. */
function drop(): void {
  const c = client;
  client = null;
  if (depth > 0) broken = true;
  c?.end().catch(() => {});
  down();
}

/** Raises DOWN and tries the connection again until it works. */
function down(): void {
  Atomics.store(shared, DOWN, 1);
  if (reconnecting) return;
  reconnecting = setInterval(() => {
    if (client) return stopTrying();
    connect().then((c) => {
      if (client) void c.end();
      else client = c;
      stopTrying();
    }, () => {});
  }, 500);
}

function stopTrying(): void {
  if (reconnecting) clearInterval(reconnecting);
  reconnecting = null;
  Atomics.store(shared, DOWN, 0);
}

interface Ask {
  id: number;
  sql: string;
  params: unknown[];
  /** 1: this statement opens a transaction, -1: it ends one. */
  tx?: 1 | -1;
}

port.on('message', (m: Ask | { suspect: true }) => {
  // The supervisor gave up waiting: this connection is not to be trusted; make another.
  if ('suspect' in m) return drop();
  void answer(m).then((reply) => {
    port.postMessage(reply);
    Atomics.add(shared, ANSWERS, 1);
    Atomics.notify(shared, ANSWERS);
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
    // Not an SQL error (those have a five-character SQLSTATE): the connection is in doubt.
    if (!/^[0-9A-Z]{5}$/.test(e.code ?? '') || /^(08|57P)/.test(e.code ?? '')) drop();
    return { id: m.id, error: { message: e.message ?? String(err), code: e.code ?? '' } };
  }
}
