import type { Dispatcher } from 'undici';

/**
 * What the proxy, `mirror` and the service-calling steps send through: undici's dispatch.
 * The worker's pools implement it (worker/target-pool.ts); steps get them through their StepEnv.
 */
export interface Upstream {
  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean;
}

/**
 * undici refused the request before sending it (its argument checks: a header value, the
 * path or the method holds a byte HTTP does not allow). The client's bytes are at fault,
 * not the upstream, and no connection was used.
 */
export function refusedBeforeSending(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === 'UND_ERR_INVALID_ARG';
}
