import type { OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import { SvcError } from '../../shared/errors.js';

/**
 * A published cluster's targets as the node's health checks see them, and until when
 * one is ejected as an outlier. Without a `healthCheck` every target is `unchecked` (in
 * rotation unless ejected, or held off by a worker after a failed connection, which is per
 * worker and not shown here). `inFlight` sums the workers' requests at each target.
 */
export const health: OpHandler<Services> = async ({ params, services }) => {
  const key = `${params.tenant!}/${params.name!}`;
  const spec = services.publisher.current()?.payload.clusters[key];
  if (!spec) throw new SvcError('Svc.Config.NotFound', `No published cluster ${params.name!} in tenant ${params.tenant!}`);
  const checked = new Map(services.health.targets(key).map((t) => [t.target, t]));
  const inFlight = await services.inFlight.ask(key);
  return {
    tenant: params.tenant,
    cluster: params.name,
    healthCheck: spec.healthCheck ?? null,
    outlier: spec.outlier ?? null,
    targets: spec.targets.map((target) => {
      const t = checked.get(target) ?? { target, state: 'unchecked', successes: 0, failures: 0, lastCheckedAt: null };
      const until = services.outliers.ejectedUntil(key, target);
      return { ...t, ejectedUntil: until === null ? null : new Date(until).toISOString(), inFlight: inFlight[target] ?? 0 };
    }),
  };
};
