import type { Dispatcher } from 'undici';
import type { TargetUpstream } from './target-upstream.js';
import { fail } from './pending-queue.js';

/** A cluster with no target to send to: its `{dns}` names have not resolved yet (503 Svc.Data.NoTargets). */
export class NoTargetsError extends Error {
  override readonly name = 'NoTargetsError';
  readonly code = 'SY_NO_TARGETS';
  constructor() {
    super('the cluster has no target yet: its DNS names have not resolved');
  }
}

/** What a cluster without targets picks: every request fails at once, before anything is sent. */
export const NO_TARGETS: TargetUpstream = {
  busy: 0,
  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    fail(opts, handler, new NoTargetsError());
    return true;
  },
  close: () => Promise.resolve(),
};
