import type { Logger } from '../shared/logger.js';

/** The limits (worker.json `limits`) whose hits the gateway itself sees. */
export type LimitName = 'headerTimeout' | 'bodyTimeout' | 'sendTimeout' | 'maxTargetBytes' | 'maxBodyBytes' | 'maxConnections' | 'chunkedRequestBodies' | 'h2MaxResetsPerSecond' | 'h2ResetCooldownS';

const LOG_EVERY_MS = 1_000;

/**
 * A counter per limit, and a warn line when one is hit: the first hit, then at most one
 * line a second per limit carrying the running total, so a flood of slow clients cannot
 * flood the log.
 */
export class LimitEvents {
  readonly counts: Record<LimitName, number> = { headerTimeout: 0, bodyTimeout: 0, sendTimeout: 0, maxTargetBytes: 0, maxBodyBytes: 0, maxConnections: 0, chunkedRequestBodies: 0, h2MaxResetsPerSecond: 0, h2ResetCooldownS: 0 };
  private readonly loggedAt: Partial<Record<LimitName, number>> = {};
  private readonly quiet: Partial<Record<LimitName, number>> = {};

  constructor(private readonly log: Logger) {}

  hit(limit: LimitName, detail?: Record<string, string | number>): void {
    const count = ++this.counts[limit];
    const now = Date.now();
    const last = this.loggedAt[limit];
    if (last !== undefined && now - last < LOG_EVERY_MS) {
      this.quiet[limit] = (this.quiet[limit] ?? 0) + 1;
      return;
    }
    this.loggedAt[limit] = now;
    const unlogged = this.quiet[limit] ?? 0;
    this.quiet[limit] = 0;
    this.log.warn({ limit, count, unlogged, ...detail }, `data port limit reached: ${limit}`);
  }
}
