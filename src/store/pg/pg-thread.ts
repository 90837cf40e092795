import { workerData, type MessagePort } from 'node:worker_threads';
import type pg from 'pg';
import { ident } from './pg-url.js';
import { ANSWERS, DOWN } from './signal.js';
import { connectPg, isSqlError } from './pg-client.js';

/**
 * The PostgreSQL volume's connection, in a thread of its own so the supervisor can wait for
 * an answer synchronously (sync-pg.ts). One client, one query at a time, in order. A lost
 * connection raises the shared DOWN flag and is made again in the background every half
 * second, one attempt at a time; the flag drops once one works, so meanwhile the supervisor
 * refuses store calls at once instead of waiting on each. Statements and lock waits are
 * bounded by the server (statement_timeout, lock_timeout): an SQL error, not an outage.
 */
const { url, schema, signal, port, timeoutMs } = workerData as { url: string; schema: string; signal: SharedArrayBuffer; port: MessagePort; timeoutMs: number };
const shared = new Int32Array(signal);

let client: pg.Client | null = null;
let connecting: Promise<pg.Client> | null = null;
/** The statements of an open transaction went with a lost connection: it fails until rolled back. */
let broken = false;
/** Transactions open on `client`, as this thread counts them (BEGIN and its end). */
let depth = 0;
let reconnecting: NodeJS.Timeout | null = null;
let lastCause = '';

/** One connection attempt at a time. */
function connect(): Promise<pg.Client> {
  connecting ??= connectPg(url, schema, {
    applicationName: 'switchyard',
    queryTimeoutMs: timeoutMs + 1_000,
    lost,
    setup: async (c) => {
      await c.query(`SET statement_timeout = ${timeoutMs}; SET lock_timeout = ${Math.min(2_000, timeoutMs)}`);
      // Made here only when missing: CREATE SCHEMA needs a privilege a role that owns a ready schema may lack.
      const has = await c.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
      if (has.rowCount === 0) {
        await c.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`).catch((e: { code?: string }) => {
          if (e.code !== '23505' && e.code !== '42P06') throw e; // another node made it meanwhile
        });
      }
    },
  }).finally(() => (connecting = null));
  return connecting;
}

async function connected(): Promise<pg.Client> {
  if (!client) {
    const c = await connect();
    if (client) void c.end();
    else client = c;
  }
  Atomics.store(shared, DOWN, 0);
  return client!;
}

function lost(c: pg.Client): void {
  if (client !== c) return;
  drop('the connection ended');
}

/** Gives up the connection (a transaction on it is lost) and goes down until a new one works. */
function drop(cause: string): void {
  const c = client;
  client = null;
  if (depth > 0) broken = true;
  depth = 0;
  c?.end().catch(() => {});
  lastCause = cause;
  Atomics.store(shared, DOWN, 1);
  reconnecting ??= setInterval(() => {
    if (client) return up();
    if (connecting) return;
    connect().then((c) => {
      if (client) void c.end();
      else client = c;
      up();
    }, (err: Error) => (lastCause = err.message));
  }, 500);
}

function up(): void {
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
  /** The supervisor's count of open transactions when it asked. */
  depth: number;
}

port.on('message', (m: Ask | { suspect: true }) => {
  // The supervisor gave up waiting: this connection is not to be trusted; make another.
  if ('suspect' in m) return drop('an answer took too long');
  void answer(m).then((reply) => {
    port.postMessage(reply);
    Atomics.add(shared, ANSWERS, 1);
    Atomics.notify(shared, ANSWERS);
  });
});

async function answer(m: Ask): Promise<object> {
  try {
    // The supervisor outside any transaction while this connection is inside one (an answer it
    // gave up on opened it): end it, so nothing of the supervisor's runs in a stale transaction.
    if (m.depth === 0 && depth > 0 && client) {
      await client.query('ROLLBACK').catch(() => {});
      depth = 0;
    }
    if (m.depth === 0) broken = false;
    if (broken) return { id: m.id, error: { message: 'the connection to PostgreSQL was lost inside this transaction', code: 'LOST_IN_TRANSACTION' } };
    const c = await connected();
    // Without values a text may hold several statements (a migration); with them it is one.
    const r = m.params.length > 0 ? await c.query({ text: m.sql, values: m.params }) : await c.query(m.sql);
    if (m.tx === 1) depth++;
    if (m.tx === -1) depth = Math.max(0, depth - 1);
    const rows = Array.isArray(r) ? [] : r.rows;
    return { id: m.id, rows, changes: Array.isArray(r) ? 0 : (r.rowCount ?? 0) };
  } catch (err) {
    const e = err as { message?: string; code?: string };
    if (m.tx === -1) depth = Math.max(0, depth - 1);
    if (!isSqlError(e.code)) drop(e.message ?? String(err));
    return { id: m.id, error: { message: e.message ?? String(err), code: e.code ?? '' }, cause: lastCause };
  }
}
