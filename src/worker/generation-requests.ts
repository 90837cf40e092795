/**
 * The requests a generation still serves: its pools close once it is retired and the
 * last one ended. Counted by the Exchange alone (its begin and its finish).
 */
export class GenerationRequests {
  private live = 0;
  private retired = false;
  private drained: (() => void) | undefined;

  constructor(private readonly closePools: () => void) {}

  /** Requests started and not yet ended. */
  get inFlight(): number {
    return this.live;
  }

  started(): void {
    this.live++;
  }

  ended(): void {
    if (--this.live === 0 && this.retired) this.close();
  }

  /** `drained`: told once the last request ended (at once when none is in flight). */
  retire(drained?: () => void): void {
    this.retired = true;
    this.drained = drained;
    if (this.live === 0) this.close();
  }

  private close(): void {
    this.closePools();
    this.drained?.();
  }
}
