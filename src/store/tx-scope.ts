import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The transaction an asynchronous context runs in. A frame lives as long as its transaction:
 * code that outlives it (a timer set inside) finds it ended and runs outside, as it should.
 */
export interface TxFrame<C> {
  conn: C;
  tx: { ended: boolean; savepoints: number };
  /** Transactions nested in this one run one after another (a savepoint stack cannot interleave). */
  nested: Promise<unknown>;
}

export class TxScope<C> {
  private readonly als = new AsyncLocalStorage<TxFrame<C>>();

  /** The open transaction of the caller's context, if any. */
  current(): TxFrame<C> | undefined {
    const f = this.als.getStore();
    return f && !f.tx.ended ? f : undefined;
  }

  /** `fn` with `conn`'s new transaction as its context; the frame ends when it settles. */
  async run<R>(conn: C, fn: () => Promise<R>): Promise<R> {
    const frame: TxFrame<C> = { conn, tx: { ended: false, savepoints: 0 }, nested: Promise.resolve() };
    try {
      return await this.als.run(frame, fn);
    } finally {
      frame.tx.ended = true;
    }
  }

  /**
   * A savepoint in `frame` around `fn`: `exec` runs the SAVEPOINT / RELEASE / ROLLBACK TO text.
   * Rolled back to (and released) when `fn` rejects.
   */
  savepoint<R>(frame: TxFrame<C>, exec: (sql: string) => Promise<void>, fn: () => Promise<R>): Promise<R> {
    const run = async (): Promise<R> => {
      const name = `sp${++frame.tx.savepoints}`;
      await exec(`SAVEPOINT ${name}`);
      let r: R;
      try {
        r = await this.als.run({ conn: frame.conn, tx: frame.tx, nested: Promise.resolve() }, fn);
      } catch (err) {
        await exec(`ROLLBACK TO SAVEPOINT ${name}`).then(() => exec(`RELEASE SAVEPOINT ${name}`)).catch(() => {});
        throw err;
      }
      await exec(`RELEASE SAVEPOINT ${name}`);
      return r;
    };
    const p = frame.nested.then(run, run);
    frame.nested = p.catch(() => undefined);
    return p;
  }
}

/** A FIFO lock: `lock()` resolves with its release once every earlier holder released. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  private holders = 0;

  get held(): boolean {
    return this.holders > 0;
  }

  lock(): Promise<() => void> {
    this.holders++;
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const ready = this.tail.then(() => () => {
      this.holders--;
      release();
    });
    this.tail = mine;
    return ready;
  }
}
