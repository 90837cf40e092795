import type { StallWatch } from '../contract.js';

/** A response whose write the client has not taken yet. */
export interface HeldWrite {
  /** Grows when the client takes bytes of the response. */
  progress(): number;
}

/**
 * The engine's held writes and their stall watches. node has no event per flushed write,
 * so one timer reads every held write's progress each `everyMs` and feeds its watch. The
 * timer runs only while a write is held, and never keeps the worker alive.
 */
export class HeldWrites {
  private readonly held = new Map<HeldWrite, StallWatch>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly everyMs: number) {}

  /** `write` is held: its watch starts now, and is fed on each sweep until release. */
  hold(write: HeldWrite, watch: StallWatch): void {
    watch.held(write.progress());
    this.held.set(write, watch);
    if (this.timer !== null) return;
    this.timer = setInterval(this.sweep, this.everyMs);
    this.timer.unref();
  }

  /** The client took `write` (or the response ended): no more watching. */
  release(write: HeldWrite): void {
    const watch = this.held.get(write);
    if (watch === undefined) return;
    this.held.delete(write);
    watch.clear();
    if (this.held.size > 0 || this.timer === null) return;
    clearInterval(this.timer);
    this.timer = null;
  }

  private readonly sweep = (): void => {
    for (const [write, watch] of this.held) watch.held(write.progress());
  };
}
