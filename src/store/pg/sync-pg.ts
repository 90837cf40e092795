import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { SvcError } from '../../shared/errors.js';
import { ANSWERS, DOWN, SLOTS } from './signal.js';
import { isSqlError } from './pg-client.js';

interface Reply {
  id: number;
  rows?: unknown[];
  changes?: number;
  error?: { message: string; code: string };
}


/**
 * Synchronous queries to PostgreSQL: the question goes to pg-thread.ts, and this thread waits
 * on a shared counter the other bumps after each answer. The repositories and the publisher
 * keep their synchronous shape (as with SQLite); the wait is one round trip on the
 * supervisor, which the data plane never waits on.
 */
export class SyncPg {
  private worker!: Worker;
  private port!: MessagePort;
  private readonly shared = new Int32Array(new SharedArrayBuffer(4 * SLOTS));
  private seq = 0;
  private closed = false;
  /** The outage was reported (onState): once per outage, then once when it ends. */
  private reported = false;

  constructor(
    private readonly url: string,
    private readonly schema: string,
    private readonly timeoutMs = 3_000,
    /** Told once when the store becomes unreachable (with why) and once when it is back. */
    private readonly onState: (down: boolean, cause: string) => void = () => {},
  ) {
    this.spawn();
  }

  private spawn(): void {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const options = { workerData: { url: this.url, schema: this.schema, signal: this.shared.buffer, port: port2, timeoutMs: this.timeoutMs }, transferList: [port2] };
    this.worker = import.meta.url.endsWith('.ts')
      ? // Run from the sources (the unit tests, under tsx): the thread needs tsx's loader too.
        new Worker(`import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(new URL('./pg-thread.ts', import.meta.url).href)}); })`, { ...options, eval: true })
      : new Worker(new URL('./pg-thread.js', import.meta.url), options);
    this.worker.unref();
    this.port.unref();
    // A thread that died (it should not) is replaced; until then calls time out as an outage.
    this.worker.on('error', (err) => this.report(true, `the connection thread failed: ${err.message}`));
    this.worker.on('exit', () => {
      if (this.closed) return;
      Atomics.store(this.shared, DOWN, 0); // the new thread connects on the next call
      this.spawn();
    });
  }

  /** `depth`: transactions the caller has open (the thread ends a stale one it holds when this is 0). */
  query(sql: string, params: readonly unknown[], tx?: 1 | -1, depth = 0): { rows: unknown[]; changes: number } {
    // Known down: refused at once, so a stopped or unreachable server never holds the supervisor.
    // Closing a transaction still goes through: the thread must learn it ended.
    if (tx !== -1 && Atomics.load(this.shared, DOWN) === 1) {
      this.report(true, 'the connection is lost');
      throw unavailable();
    }
    const id = ++this.seq;
    let seen = Atomics.load(this.shared, ANSWERS);
    this.port.postMessage({ id, sql, params: params.map(param), tx, depth });
    // Past the thread's own bounds (the server's statement_timeout, then pg's query_timeout): normally its answer comes first.
    const deadline = Date.now() + this.timeoutMs + 1_500;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(this.shared, ANSWERS, seen, left) === 'timed-out') {
        // Down until the thread has a connection that works again: later calls fail at once.
        Atomics.store(this.shared, DOWN, 1);
        this.port.postMessage({ suspect: true });
        this.report(true, `no answer within ${this.timeoutMs + 1_500} ms`);
        throw unavailable();
      }
      seen = Atomics.load(this.shared, ANSWERS);
      // Answers to questions given up on (timed out) come first: drop them.
      for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
        const r = m.message as Reply;
        if (r.id !== id) continue;
        if (r.error) {
          if (!isSqlError(r.error.code)) {
            this.report(true, r.error.message);
            throw unavailable();
          }
          throw failure(r.error);
        }
        this.report(false, '');
        return { rows: r.rows ?? [], changes: r.changes ?? 0 };
      }
    }
  }

  private report(down: boolean, cause: string): void {
    if (down === this.reported) return;
    this.reported = down;
    this.onState(down, cause);
  }

  close(): void {
    this.closed = true;
    void this.worker.terminate();
  }
}

/** What a caller is told (the cause, which may name hosts, goes to the log only). */
const unavailable = () => new SvcError('Svc.Store.Unavailable', 'The store (PostgreSQL) cannot be reached; the gateway tries again every 0.5 s');

/** better-sqlite3 takes booleans as integers and bigints as numbers; pg is given the same values. */
function param(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return v.toString();
  return v;
}

/** An SQL error: busy (a lock or statement timeout, a deadlock, a serialization failure) is 503, anything else a fault. */
function failure(e: { message: string; code: string }): Error {
  if (/^(55P03|57014|40P01|40001)$/.test(e.code)) return new SvcError('Svc.Store.Unavailable', 'The store (PostgreSQL) is busy; try again');
  return Object.assign(new Error(e.message), { code: e.code });
}
