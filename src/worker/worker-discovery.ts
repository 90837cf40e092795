import type { DiscoveredAddress, DiscoverySet } from '../contracts/discovery.js';
import type { CompiledGeneration } from '../contracts/generation.js';
import type { TargetHealth } from './target-health.js';

/**
 * The addresses the supervisor resolved for the clusters' `{dns}` targets, as it last pushed
 * them (`discovery`, and init), kept across generations so a publish serves at once with the
 * sets already found. A change moves the targets' health version too: every ClusterPools
 * checks that one integer per pick, so a DNS cluster's pools re-expand on their next request
 * and a fixed cluster pays nothing. A source's set goes only when this worker swaps to a
 * generation that does not name it: the generation served until then may still need it.
 */
export class WorkerDiscovery {
  version = 0;
  private readonly sets = new Map<string, DiscoverySet>();

  constructor(
    private readonly health: TargetHealth,
    /** After any change (the per-address meters follow the expanded targets). */
    private readonly changed: () => void = () => {},
  ) {}

  readonly get = (source: string): readonly DiscoveredAddress[] | undefined => this.sets.get(source)?.addresses;

  /** Sets newer than the ones held replace them. */
  update(sets: readonly DiscoverySet[]): void {
    let changed = false;
    for (const s of sets) {
      const have = this.sets.get(s.id);
      if (have && have.version >= s.version) continue;
      this.sets.set(s.id, s);
      changed = true;
    }
    if (changed) this.moved();
  }

  /** The generation now served: the sets of sources it does not name go. */
  served(gen: CompiledGeneration): void {
    const listed = new Set((gen.discoverySources ?? []).map((s) => s.id));
    let changed = false;
    for (const id of this.sets.keys()) if (!listed.has(id)) changed = this.sets.delete(id) || changed;
    if (changed) this.moved();
  }

  private moved(): void {
    this.version++;
    this.health.touch();
    this.changed();
  }
}
