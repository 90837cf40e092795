import type { Logger } from '../shared/logger.js';

const LOG_EVERY_MS = 10_000;

/** What the connection budget shed since its last line. */
export interface ShedCounts {
  /** Headless connections closed at a head deadline shortened by the load. */
  timedOut: number;
  /** Connections closed for a new one over the cap, or to follow a lowered descriptor limit. */
  evicted: number;
  /** New connections answered 503 (every other one in a call being handled). */
  refused: number;
}

/** One warn line per LOG_EVERY_MS while admin connections are shed, with what was shed, so a flood cannot flood the log. */
export class ShedReport {
  counts: ShedCounts = { timedOut: 0, evicted: 0, refused: 0 };
  private loggedAt = 0;

  constructor(private readonly log: Logger) {}

  report(now: number, state: { open: number; cap: number; headDeadlineMs: number }): void {
    const { timedOut, evicted, refused } = this.counts;
    if (timedOut + evicted + refused === 0 || now - this.loggedAt < LOG_EVERY_MS) return;
    this.log.warn({ ...state, timedOut, evicted, refused }, 'admin connections shed');
    this.counts = { timedOut: 0, evicted: 0, refused: 0 };
    this.loggedAt = now;
  }
}
