import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { SvcError } from '../../shared/errors.js';
import { ANSWERS, DOWN, SLOTS } from './signal.js';

interface Reply {
  id: number;
  rows?: unknown[];
  changes?: number;
  error?: { message: string; code: string };
}

/**
 * An SQL error has a five-character SQLSTATE; anything else (ECONNREFUSED, a connect timeout,
 * a connection ended) and the connection classes 08 and 57P are the server being down, gone
 * or unreachable: 503 Svc.Store.Unavailable, not a 500.
 */
const sqlError = (code: string) => /^[0-9A-Z]{5}$/.test(code) && !/^(08|57P)/.test(code);

/**
 * Synchronous queries to PostgreSQL: the question goes to pg-thread.ts, and this thread waits
 * on a shared counter the other bumps after each answer. The repositories and the publisher
 * keep their synchronous shape (as with SQLite); the wait is one round trip on the
 * supervisor, which the data plane never waits on.
 */
export class SyncPg {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly shared: Int32Array;
  private seq = 0;

  constructor(url: string, schema: string, private readonly timeoutMs = 3_000) {
    const signal = new SharedArrayBuffer(4 * SLOTS);
    this.shared = new Int32Array(signal);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const options = { workerData: { url, schema, signal, port: port2, timeoutMs }, transferList: [port2] };
    this.worker = import.meta.url.endsWith('.ts')
      ? // Run from the sources (the unit tests, under tsx): the thread needs tsx's loader too.
        new Worker(`import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(new URL('./pg-thread.ts', import.meta.url).href)}); })`, { ...options, eval: true })
      : new Worker(new URL('./pg-thread.js', import.meta.url), options);
    this.worker.unref();
    this.port.unref();
  }

  query(sql: string, params: readonly unknown[], tx?: 1 | -1): { rows: unknown[]; changes: number } {
    // Known down: refused at once, so a stopped or unreachable server never holds the supervisor.
    // Closing a transaction still goes through: the thread must learn it ended.
    if (tx !== -1 && Atomics.load(this.shared, DOWN) === 1) throw new SvcError('Svc.Store.Unavailable', 'PostgreSQL cannot be reached; the gateway retries every 0.5 s');
    const id = ++this.seq;
    let seen = Atomics.load(this.shared, ANSWERS);
    this.port.postMessage({ id, sql, params: params.map(param), tx });
    // A little past the thread's own query timeout: normally its answer (an error) comes first.
    const deadline = Date.now() + this.timeoutMs + 500;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(this.shared, ANSWERS, seen, left) === 'timed-out') {
        // Down until the thread has a connection that works again: later calls fail at once.
        Atomics.store(this.shared, DOWN, 1);
        this.port.postMessage({ suspect: true });
        throw new SvcError('Svc.Store.Unavailable', `PostgreSQL did not answer within ${this.timeoutMs} ms`);
      }
      seen = Atomics.load(this.shared, ANSWERS);
      // Answers to questions given up on (timed out) come first: drop them.
      for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
        const r = m.message as Reply;
        if (r.id !== id) continue;
        if (r.error) throw failure(r.error);
        return { rows: r.rows ?? [], changes: r.changes ?? 0 };
      }
    }
  }

  close(): void {
    void this.worker.terminate();
  }
}

/** better-sqlite3 takes booleans as integers and bigints as numbers; pg is given the same values. */
function param(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return v.toString();
  return v;
}

function failure(e: { message: string; code: string }): Error {
  if (!sqlError(e.code)) {
    return new SvcError('Svc.Store.Unavailable', `PostgreSQL is unavailable: ${e.message}`);
  }
  return Object.assign(new Error(e.message), { code: e.code });
}
