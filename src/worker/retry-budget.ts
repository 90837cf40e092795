const WINDOW_S = 10;

/**
 * A cluster's retry budget in one worker (Linkerd's shape): over the last 10 s, retries
 * may be at most `percent` of the requests plus `minPerSecond` a second, so a quiet
 * cluster can retry at all and a failing one cannot multiply its load. Counted in
 * one-second slots, so a check costs a short loop and no allocation.
 */
export class RetryBudget {
  private readonly requests = new Array<number>(WINDOW_S).fill(0);
  private readonly retries = new Array<number>(WINDOW_S).fill(0);
  private second = 0;

  constructor(
    private readonly percent: number,
    private readonly minPerSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  request(): void {
    this.requests[this.slot()]!++;
  }

  /** Takes one retry from the budget when there is one. */
  tryRetry(): boolean {
    const slot = this.slot();
    let requests = 0;
    let retries = 0;
    for (let i = 0; i < WINDOW_S; i++) {
      requests += this.requests[i]!;
      retries += this.retries[i]!;
    }
    if (retries + 1 > (requests * this.percent) / 100 + this.minPerSecond * WINDOW_S) return false;
    this.retries[slot]!++;
    return true;
  }

  /** The slot of this second, clearing the ones the window moved past. */
  private slot(): number {
    const s = Math.floor(this.now() / 1_000);
    if (s !== this.second) {
      for (let k = this.second + 1; k <= Math.min(s, this.second + WINDOW_S); k++) {
        this.requests[k % WINDOW_S] = 0;
        this.retries[k % WINDOW_S] = 0;
      }
      this.second = s;
    }
    return s % WINDOW_S;
  }
}
