import type { Upstream } from '../contracts/upstream.js';
import type { UpstreamGuard } from '../shared/upstream-guard.js';
import { TargetPool } from './target-pool.js';

/**
 * Keep-alive connections per service origin, per worker, for the steps that call other
 * services (forward-auth, http-callout; StepEnv.servicePool). TargetPool rather than
 * undici's Agent, for the reason given on TargetPool. Held by the worker's context, so
 * they outlive generations.
 */
export class ServicePools {
  private readonly byOrigin = new Map<string, TargetPool>();
  /** By tenant and the step's configured URL, so the URL is parsed once, not per call. */
  private readonly byUrl = new Map<string, TargetPool>();

  constructor(private readonly guard: UpstreamGuard) {}

  /** StepEnv.servicePool, bound. */
  readonly pool = (tenant: string, url: string): Upstream => {
    const key = `${tenant} ${url}`;
    let p = this.byUrl.get(key);
    if (p === undefined) {
      const u = new URL(url);
      // Per tenant: each tenant's connections are checked against its own upstream policy.
      const at = `${tenant} ${u.origin}`;
      p = this.byOrigin.get(at);
      if (p === undefined) {
        const connect = this.guard.connect(tenant, u.protocol === 'https:' && u.port === '' ? `${u.host}:443` : u.host);
        this.byOrigin.set(at, (p = new TargetPool(u.origin, { connections: 64, client: { keepAliveTimeout: 4_000, connect } })));
      }
      this.byUrl.set(key, p);
    }
    return p;
  };
}
