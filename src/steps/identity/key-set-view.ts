import type { JWTVerifyGetKey } from 'jose';
import type { KeySetState } from '../../contracts/key-sets.js';

/** A fetched key set as a worker holds it: the keys imported once per version (jose's local JWKS). */
export interface HeldKeySet {
  readonly version: number;
  readonly state: KeySetState;
  /** Null unless fresh or stale. */
  readonly keys: JWTVerifyGetKey | null;
}

/**
 * The key sets the supervisor fetched and pushed, as steps see them (StepEnv.keySets; the
 * worker's context holds them across generations).
 */
export interface KeySetsView {
  get(id: string): HeldKeySet | undefined;
  /**
   * Asks the supervisor for a fresh fetch and resolves with the set once it answers, or
   * after KEY_WAIT_MS. When the node may not fetch again within that wait (its cooldown,
   * KeySetEntry.nextFetchAt), resolves at once with the set held (a flood of unknown `kid`s
   * costs no IPC and no wait).
   */
  refresh(id: string): Promise<HeldKeySet | undefined>;
}
