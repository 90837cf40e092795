import type { KeyRepo } from '../../store/key-repo.js';

/**
 * `lastUsedAt`, kept off the request path: a use is noted in memory and the batch is
 * written once a second in one transaction, so a key busy with thousands of calls
 * costs at most one row write per second.
 */
export class KeyUsage {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly keys: KeyRepo,
    private readonly onError: (err: unknown) => void,
    private readonly intervalMs = 1000,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  touch(id: string, at: number): void {
    this.pending.set(id, at);
  }

  /**
   * The key's last use: the stored one, or a newer one noted and not yet written. Answers read
   * this instead of flushing, since a flush inside an admin write's transaction would be
   * rolled back with it (and the batch dropped).
   */
  latest(id: string, stored: number | null): number | null {
    const noted = this.pending.get(id);
    return noted !== undefined && (stored === null || noted > stored) ? noted : stored;
  }

  /**
   * Writes what is pending (also on shutdown, so no use is lost). A batch whose write failed
   * (the store unreachable) is reported and dropped: a use time is a hint, not a record.
   */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.keys.recordUse(batch);
    } catch (err) {
      this.onError(err);
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}
