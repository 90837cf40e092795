import type { TargetChoice } from './target-choice.js';

/**
 * Smooth weighted round robin (nginx's): each pick adds every usable target's weight to its
 * score, takes the highest and takes the total off it, so 1:3 goes B B A B, never A A.
 */
export class WeightedRoundRobin implements TargetChoice {
  private readonly score: number[];

  constructor(private readonly weights: readonly number[]) {
    this.score = weights.map(() => 0);
  }

  carry(prev: TargetChoice, from: readonly number[]): void {
    if (!(prev instanceof WeightedRoundRobin)) return;
    from.forEach((j, i) => {
      if (j >= 0) this.score[i] = prev.score[j] ?? 0;
    });
  }

  choose(_key: string | null, usable: (i: number) => boolean): number {
    let best = -1;
    let total = 0;
    for (let i = 0; i < this.weights.length; i++) {
      if (!usable(i)) continue;
      this.score[i]! += this.weights[i]!;
      total += this.weights[i]!;
      if (best === -1 || this.score[i]! > this.score[best]!) best = i;
    }
    if (best === -1) return 0; // none usable: the caller takes any
    this.score[best]! -= total;
    return best;
  }
}
