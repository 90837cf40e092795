import type { StepEnv } from '../step.js';

type Log = StepEnv['log'];

/**
 * An introspection endpoint's outage as the log tells it: a line when calls start failing,
 * a line the first time it makes the step pass a token on a stale answer (fail static) and
 * the first time it makes the step refuse one (503), and a line when a call succeeds again,
 * with what the outage cost. Never a line per request.
 */
export class EndpointOutage {
  private since = 0;
  private stale = 0;
  private refused = 0;

  constructor(
    private readonly log: Log,
    /** What names the step in its lines (tenant, route, url). */
    private readonly where: object,
  ) {}

  get down(): boolean {
    return this.since !== 0;
  }

  /** A call failed (once per call, not per request that waited on it). */
  failed(reason: string, now: number): void {
    if (this.since !== 0) return;
    this.since = now;
    this.log.warn({ ...this.where, reason }, 'introspection endpoint gives no usable answer: tokens without a cached answer get 503 (a recent active one passes while it is unreachable: maxStaleSeconds)');
  }

  /** A request passed on a stale answer while the endpoint is down. */
  servedStale(): void {
    if (this.stale++ === 0) this.log.warn(this.where, 'introspection: serving stale answers (fail static)');
  }

  /** A request was refused 503 while the endpoint is down. */
  refusedUnavailable(): void {
    if (this.refused++ === 0) this.log.warn(this.where, 'introspection: refusing tokens without a recent answer (503 Svc.Data.AuthUnavailable)');
  }

  /** A call succeeded: the outage, if any, is over. */
  recovered(now: number): void {
    if (this.since === 0) return;
    this.log.info({ ...this.where, downMs: now - this.since, staleAnswers: this.stale, refused: this.refused }, 'introspection endpoint answers again');
    this.since = 0;
    this.stale = 0;
    this.refused = 0;
  }
}
