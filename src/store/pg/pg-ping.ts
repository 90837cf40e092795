import type pg from 'pg';
import { connectPg } from './pg-client.js';

/**
 * The readiness check's query on a postgres:// volume, on a connection of its own: never
 * queued behind the store's pool (every connection held by transactions) nor behind the
 * fleet follower's heartbeat. Asynchronous and
 * bounded (connect and query) by the caller's timeout; a failed connection is dropped and
 * the next ping opens another.
 */
export class PgPing {
  private client: Promise<pg.Client> | null = null;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly schema: string,
    private readonly timeoutMs: number,
  ) {}

  async ping(): Promise<void> {
    const c = await this.connected();
    try {
      await c.query('SELECT 1');
    } catch (err) {
      this.forget(c);
      throw err;
    }
  }

  close(): void {
    this.closed = true;
    const c = this.client;
    this.client = null;
    void c?.then((x) => x.end().catch(() => {}), () => {});
  }

  private connected(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('closed'));
    this.client ??= connectPg(this.url, this.schema, {
      applicationName: 'switchyard-readiness',
      queryTimeoutMs: this.timeoutMs,
      lost: (c) => this.forget(c),
    }).catch((err: unknown) => {
      this.client = null;
      throw err;
    });
    return this.client;
  }

  private forget(c: pg.Client): void {
    void this.client?.then((mine) => {
      if (mine === c) this.client = null;
    }, () => {});
    c.end().catch(() => {});
  }
}
