import type { DiscoveredAddress, DiscoverySet } from '../contracts/discovery.js';
import type { TargetHealth } from './target-health.js';

/**
 * The addresses the supervisor resolved for the clusters' `{dns}` targets, as it last pushed
 * them (`discovery`, and init), kept across generations so a publish serves at once with the
 * sets already found. A change moves the targets' health version too: every ClusterPools
 * checks that one integer per pick, so a DNS cluster's pools re-expand on their next request
 * and a fixed cluster pays nothing.
 */
export class WorkerDiscovery {
  version = 0;
  private readonly sets = new Map<string, DiscoverySet>();

  constructor(private readonly health: TargetHealth) {}

  readonly get = (source: string): readonly DiscoveredAddress[] | undefined => this.sets.get(source)?.addresses;

  /** Sets newer than the ones held replace them; `dropped`: sources no served generation names any more. */
  update(sets: readonly DiscoverySet[], dropped: readonly string[] = []): void {
    let changed = false;
    for (const s of sets) {
      const have = this.sets.get(s.id);
      if (have && have.version >= s.version) continue;
      this.sets.set(s.id, s);
      changed = true;
    }
    for (const id of dropped) changed = this.sets.delete(id) || changed;
    if (!changed) return;
    this.version++;
    this.health.touch();
  }
}
