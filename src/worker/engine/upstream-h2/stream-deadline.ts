import type { Dispatcher } from 'undici';

/** undici's own deadlines, for a request that sets none. */
const DEFAULT_TIMEOUT_MS = 300_000;

/**
 * A request's two deadlines as undici keeps them, on one timer: `headersTimeout` until the
 * answer's head (renewed by every body write and at the body's end), then `bodyTimeout`
 * between two chunks (renewed by each, and at resume). 0 is none. Whether an expiry counts
 * (an upload still going, a paused answer) is the caller's to decide: `renew` re-arms a
 * timer that fired without effect.
 */
export class StreamDeadline {
  private timer: NodeJS.Timeout | null = null;
  phase: 'headers' | 'body' = 'headers';

  constructor(
    private readonly opts: Pick<Dispatcher.DispatchOptions, 'headersTimeout' | 'bodyTimeout'>,
    private readonly expired: (phase: 'headers' | 'body') => void,
  ) {}

  start(phase: 'headers' | 'body'): void {
    this.phase = phase;
    this.clear();
    const ms = (phase === 'headers' ? this.opts.headersTimeout : this.opts.bodyTimeout) ?? DEFAULT_TIMEOUT_MS;
    if (ms > 0) this.timer = setTimeout(() => this.expired(this.phase), ms);
  }

  /** Starts the current deadline again from now, if it is `phase`'s (a fired timer too). */
  renew(phase: 'headers' | 'body'): void {
    if (this.phase === phase) this.timer?.refresh();
  }

  clear(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
