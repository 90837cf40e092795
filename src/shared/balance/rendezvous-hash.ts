import type { TargetChoice } from './target-choice.js';

/** FNV-1a over the UTF-16 code units, then murmur3's finalizer to spread short keys. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return fmix32(h);
}

/** murmur3's 32-bit finalizer: every input bit flips about half the output bits. */
function fmix32(x: number): number {
  let h = x;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Weighted rendezvous hashing (Ceph's straw2): each target draws `ln(u) / weight` from a hash
 * of the key and its own address, and the highest draw wins. A key moves only when its
 * target leaves or a new target outdraws it, so adding one of N targets moves 1/N of the keys
 * in expectation, with none of a ring's arc-length luck (test/unit/balance.test.ts has
 * the figures). Requests without a key go to `fallback`. The cost is one mix and one log
 * per target per request.
 */
export class RendezvousHash implements TargetChoice {
  private readonly seeds: Uint32Array;
  private readonly inverseWeights: Float64Array;

  constructor(
    addresses: readonly string[],
    weights: readonly number[],
    private readonly fallback: TargetChoice,
  ) {
    this.seeds = Uint32Array.from(addresses, hash32);
    this.inverseWeights = Float64Array.from(weights, (w) => 1 / w);
  }

  carry(prev: TargetChoice, from: readonly number[]): void {
    if (prev instanceof RendezvousHash) this.fallback.carry?.(prev.fallback, from);
  }

  choose(key: string | null, usable: (i: number) => boolean): number {
    if (key === null) return this.fallback.choose(null, usable);
    const k = hash32(key);
    let best = -1;
    let bestDraw = -Infinity;
    let own = 0;
    let ownDraw = -Infinity;
    for (let t = 0; t < this.seeds.length; t++) {
      // Mixed with the target's address only (never its index): reordering targets moves no key.
      const seed = this.seeds[t]!;
      const draw = Math.log((fmix32(fmix32(k ^ seed) + seed) + 1) / 4294967297) * this.inverseWeights[t]!;
      if (draw > ownDraw) {
        own = t;
        ownDraw = draw;
      }
      if (draw > bestDraw && usable(t)) {
        best = t;
        bestDraw = draw;
      }
    }
    return best === -1 ? own : best; // none usable: the key's own target
  }
}
