import type { OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import { SvcError } from '../../shared/errors.js';

/**
 * A published cluster's targets as the node's health checks see them, and until when
 * one is ejected as an outlier. Without a `healthCheck` every target is `unchecked` (in
 * rotation unless ejected, or held off by a worker after a failed connection, which is per
 * worker and not shown here). `inFlight` sums the workers' requests at each target.
 * A cluster with `{dns}` targets lists each address found as a target (`discovered`), and
 * under `dns` each name's last resolution (time, result, addresses, fail-static state).
 */
export const health: OpHandler<Services> = async ({ params, services }) => {
  const key = `${params.tenant!}/${params.name!}`;
  const published = services.publisher.current()?.payload.clusters[key];
  if (!published) throw new SvcError('Svc.Config.NotFound', `No published cluster ${params.name!} in tenant ${params.tenant!}`);
  // With {dns} targets: the fixed targets, then each address found (its weight and SRV priority shown).
  const spec = services.discovery.cluster(published);
  const checked = new Map(services.health.targets(key).map((t) => [t.target, t]));
  const inFlight = await services.inFlight.ask(key);
  return {
    tenant: params.tenant,
    cluster: params.name,
    healthCheck: spec.healthCheck ?? null,
    outlier: spec.outlier ?? null,
    targets: spec.targets.map((target, i) => {
      const t = checked.get(target) ?? { target, state: 'unchecked', successes: 0, failures: 0, lastCheckedAt: null };
      const until = services.outliers.ejectedUntil(key, target);
      const found = i >= published.targets.length ? { discovered: true, weight: spec.weights?.[i] ?? 1, priority: spec.priorities?.[i] ?? 0 } : {};
      return { ...t, ejectedUntil: until === null ? null : new Date(until).toISOString(), inFlight: inFlight[target] ?? 0, ...found };
    }),
    ...(published.discover ? { dns: services.discovery.status(key) } : {}),
  };
};
