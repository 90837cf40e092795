import type { CompiledCluster } from '../../contracts/generation.js';
import { RendezvousHash } from './rendezvous-hash.js';
import { LeastRequest } from './least-request.js';
import { WeightedRoundRobin } from './weighted-round-robin.js';

/**
 * How a cluster picks a target for a request: the index of one `usable` says yes to (a target
 * not held off), or of any target when none is. `key` is the request's hash key (null: none).
 */
export interface TargetChoice {
  choose(key: string | null, usable: (i: number) => boolean): number;
  /** The targets changed (DNS): target i was `from[i]` in `prev` (-1: new), whose running scores it keeps. */
  carry?(prev: TargetChoice, from: readonly number[]): void;
}

/** The cluster's balancing, built once per generation; null for plain round robin (the pools' own fast path). */
export function targetChoice(spec: CompiledCluster, busy: (i: number) => number): TargetChoice | null {
  const weights = spec.weights ?? spec.targets.map(() => 1);
  if (spec.balance === 'least-request') return new LeastRequest(weights, busy);
  if (spec.balance === 'hash') return new RendezvousHash(spec.targets, weights, new WeightedRoundRobin(weights));
  return spec.weights ? new WeightedRoundRobin(weights) : null;
}
