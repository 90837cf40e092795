import type { TargetChoice } from './target-choice.js';

/**
 * Power of two choices: two usable targets at random, the one with fewer requests in flight
 * for its weight wins. A slow target keeps its requests longer, so it gets fewer new ones.
 */
export class LeastRequest implements TargetChoice {
  constructor(
    private readonly weights: readonly number[],
    /** Requests in flight on target i (in this worker). */
    private readonly busy: (i: number) => number,
  ) {}

  choose(_key: string | null, usable: (i: number) => boolean): number {
    const n = this.weights.length;
    if (n === 1) return 0;
    const a = this.randomUsable(usable, -1);
    const b = this.randomUsable(usable, a);
    if (a === -1) return 0;
    if (b === -1) return a;
    return this.busy(a) / this.weights[a]! <= this.busy(b) / this.weights[b]! ? a : b;
  }

  /** A usable target other than `not`, from a random start round the list; -1 when there is none. */
  private randomUsable(usable: (i: number) => boolean, not: number): number {
    const n = this.weights.length;
    const start = Math.floor(Math.random() * n);
    for (let k = 0; k < n; k++) {
      const i = (start + k) % n;
      if (i !== not && usable(i)) return i;
    }
    return -1;
  }
}
