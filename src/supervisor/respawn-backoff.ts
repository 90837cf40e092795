/**
 * Respawn delay for a worker slot: immediate after a worker that ran a while,
 * doubling (up to a cap) while the slot keeps dying young, so a crash loop does not
 * spin the CPU.
 */
export class RespawnBackoff {
  private delay = 0;

  constructor(
    private readonly minMs = 100,
    private readonly maxMs = 10_000,
    private readonly healthyAfterMs = 5_000,
  ) {}

  next(livedMs: number): number {
    if (livedMs >= this.healthyAfterMs) this.delay = 0;
    const now = this.delay;
    this.delay = Math.min(this.maxMs, Math.max(this.minMs, this.delay * 2));
    return now;
  }
}
