import type { TargetChoice } from './target-choice.js';

/** Points each unit of weight puts on the ring: enough that adding one of N targets moves about 1/N of the keys. */
const POINTS_PER_WEIGHT = 160;

/** FNV-1a over the UTF-16 code units, then murmur3's finalizer to spread short keys. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Consistent hashing on a ring of points per target (ketama's shape): a key goes to the
 * target of the first point at or after its hash, or, while that target is held off, of
 * the next point whose target is not, so a key moves only when its own target leaves.
 * Requests without a key go round robin (`fallback`).
 */
export class HashRing implements TargetChoice {
  private readonly points: Uint32Array;
  private readonly owners: Uint16Array;

  constructor(
    addresses: readonly string[],
    weights: readonly number[],
    private readonly fallback: TargetChoice,
  ) {
    const all: [number, number][] = [];
    addresses.forEach((address, t) => {
      for (let k = 0; k < POINTS_PER_WEIGHT * weights[t]!; k++) all.push([hash32(`${address}#${k}`), t]);
    });
    all.sort((x, y) => x[0] - y[0]);
    this.points = Uint32Array.from(all, (p) => p[0]);
    this.owners = Uint16Array.from(all, (p) => p[1]);
  }

  choose(key: string | null, usable: (i: number) => boolean): number {
    if (key === null) return this.fallback.choose(null, usable);
    const n = this.points.length;
    let i = this.firstAtOrAfter(hash32(key));
    for (let k = 0; k < n; k++, i = i + 1 === n ? 0 : i + 1) {
      if (usable(this.owners[i]!)) return this.owners[i]!;
    }
    return this.owners[this.firstAtOrAfter(hash32(key))]!; // none usable: the key's own target
  }

  private firstAtOrAfter(h: number): number {
    let lo = 0;
    let hi = this.points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.points[mid]! < h) lo = mid + 1;
      else hi = mid;
    }
    return lo === this.points.length ? 0 : lo;
  }
}
