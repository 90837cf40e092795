import { createLocalJWKSet } from 'jose';
import { KEY_WAIT_MS, type KeySetEntry } from '../contracts/key-sets.js';
import type { FromWorker } from '../contracts/ipc.js';
import type { HeldKeySet, KeySetsView } from '../steps/identity/key-set-view.js';

interface Ask {
  promise: Promise<HeldKeySet | undefined>;
  resolve: (set: HeldKeySet | undefined) => void;
  timer: NodeJS.Timeout;
}

/**
 * The key sets the supervisor pushed (`key-sets` messages, and init's), held by the
 * worker's context across generations; each set's keys are imported once, when it arrives.
 * A step that needs a fetch asks through here: one `key-refresh` per source at a time.
 */
export class WorkerKeySets implements KeySetsView {
  private readonly sets = new Map<string, HeldKeySet>();
  private readonly asks = new Map<string, Ask>();
  /** When the node may fetch each source again (KeySetEntry.nextFetchAt, the latest heard). */
  private readonly nextFetchAt = new Map<string, number>();

  constructor(
    private readonly send: (msg: FromWorker) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Newer sets replace older ones (a push and an answer may cross); an ask waiting on a source is answered either way. */
  update(entries: readonly KeySetEntry[], dropped: readonly string[] = []): void {
    for (const id of dropped) {
      this.sets.delete(id);
      this.nextFetchAt.delete(id);
      this.settle(id);
    }
    for (const e of entries) {
      const held = this.sets.get(e.id);
      if (held === undefined || held.version < e.version) {
        const usable = e.keys.length > 0 && (e.state === 'fresh' || e.state === 'stale');
        this.sets.set(e.id, { version: e.version, state: e.state, keys: usable ? createLocalJWKSet({ keys: e.keys as never }) : null });
      }
      // An answer without a change keeps the version but may tell of a later fetch.
      this.nextFetchAt.set(e.id, Math.max(this.nextFetchAt.get(e.id) ?? 0, e.nextFetchAt ?? 0));
      this.settle(e.id);
    }
  }

  get(id: string): HeldKeySet | undefined {
    return this.sets.get(id);
  }

  /**
   * Waits (up to KEY_WAIT_MS) for the source's next set. The ask goes out when the node's
   * cooldown (nextFetchAt) ends within the wait (the supervisor defers the fetch to then);
   * later than that, and with no ask of this worker under way, the set held answers at once
   * (a flood of unknown kids is refused without a stall). One ask per source at a time.
   */
  refresh(id: string): Promise<HeldKeySet | undefined> {
    const asked = this.asks.get(id);
    if (asked) return asked.promise;
    const held = this.sets.get(id);
    const left = held !== undefined && held.state !== 'pending' ? (this.nextFetchAt.get(id) ?? 0) - this.now() : 0;
    if (left > KEY_WAIT_MS) return Promise.resolve(held);
    let resolve!: (set: HeldKeySet | undefined) => void;
    const promise = new Promise<HeldKeySet | undefined>((r) => (resolve = r));
    // Bounded: a request waits no longer than this for the supervisor's answer.
    const timer = setTimeout(() => {
      this.asks.delete(id);
      resolve(this.sets.get(id));
    }, KEY_WAIT_MS);
    timer.unref();
    this.asks.set(id, { promise, resolve, timer });
    this.send({ type: 'key-refresh', source: id });
    return promise;
  }

  private settle(id: string): void {
    const ask = this.asks.get(id);
    if (!ask) return;
    // A push of a set still pending is not the answer: the first fetch has not ended.
    if (this.sets.get(id)?.state === 'pending') return;
    this.asks.delete(id);
    clearTimeout(ask.timer);
    ask.resolve(this.sets.get(id));
  }
}
