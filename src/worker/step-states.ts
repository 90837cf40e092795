import type { CompiledGeneration, CompiledStep } from '../contracts/generation.js';
import { freshState, TRIAL_BUCKET, type StateOf } from '../steps/step-state.js';

/**
 * The state steps keep across publishes in one worker (a cache's answers, an auth step's
 * memo, a circuit, the requests in flight): one object per step bucket, held by the
 * WorkerContext. Every generation is built with it, so a step whose bucket is unchanged
 * gets the object it had; after a generation is built, the buckets it no longer uses are
 * dropped (a replaced runtime's closures keep their own references until its requests end).
 */
export class StepStates {
  private readonly states = new Map<string, unknown>();

  /** The `state` a step built for `bucket` gets in its factory's context. */
  of(bucket: string): StateOf {
    if (bucket === TRIAL_BUCKET) return freshState;
    return <T>(make: () => T): T => {
      let s = this.states.get(bucket) as T | undefined;
      if (s === undefined) this.states.set(bucket, (s = make()));
      return s;
    };
  }

  /** Buckets holding state. */
  get size(): number {
    return this.states.size;
  }

  /** Drops the state of every bucket not in `buckets` (stepBuckets of the generation now served). */
  keepOnly(buckets: ReadonlySet<string>): void {
    for (const b of this.states.keys()) if (!buckets.has(b)) this.states.delete(b);
  }
}

/** Every step bucket a generation's routes build (group members included). */
export function stepBuckets(gen: CompiledGeneration): Set<string> {
  const out = new Set<string>();
  const walk = (steps: readonly CompiledStep[]) => {
    for (const s of steps) {
      if (s.kind === 'group') for (const m of s.members) walk(m);
      else out.add(s.bucket);
    }
  };
  for (const t of Object.values(gen.tenants)) for (const r of t.routes) if (r.terminal.type === 'cluster') walk(r.terminal.steps);
  return out;
}
