import type { Dispatcher } from 'undici';

/**
 * What the proxy, `mirror` and the service-calling steps send through: undici's dispatch.
 * The worker's pools implement it (worker/target-pool.ts); steps get them through their StepEnv.
 */
export interface Upstream {
  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean;
}
