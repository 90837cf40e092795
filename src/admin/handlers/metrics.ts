import { Reply, type OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import { Exposition } from '../../shared/metrics-exposition.js';
import { clusterNames } from '../../contracts/metrics.js';

/**
 * Prometheus text exposition: the supervisor's own gauges and counters, then the data
 * plane's, summed over every worker (docs/observability.md). Counters are since the
 * supervisor started.
 */
export const metrics: OpHandler<Services> = async ({ services }) => {
  const out = new Exposition();
  const workers = services.pool.status();
  out.family('switchyard_generation', 'gauge', 'The generation the workers serve.').sample('switchyard_generation', {}, services.publisher.currentId());
  out.family('switchyard_workers', 'gauge', 'Worker processes by state.');
  for (const s of new Set(workers.map((w) => w.state))) out.sample('switchyard_workers', { state: s }, workers.filter((w) => w.state === s).length);
  out.family('switchyard_admin_key_store_lookups_total', 'counter', 'Sub-key lookups in the store.').sample('switchyard_admin_key_store_lookups_total', {}, services.keys.lookups);
  out
    .family('switchyard_admin_key_checksum_refusals_total', 'counter', 'Sub-key tokens refused on their checksum, without a store lookup.')
    .sample('switchyard_admin_key_checksum_refusals_total', {}, services.subKeys.stats.refusedByChecksum);
  out
    .family('switchyard_admin_auth_throttled_total', 'counter', 'Admin calls refused with 429 after too many failed authentications.')
    .sample('switchyard_admin_auth_throttled_total', {}, services.throttle.throttled);
  out
    .family('switchyard_admin_auth_failures_total', 'counter', 'Admin calls refused with 401: no token, or one no key matches.')
    .sample('switchyard_admin_auth_failures_total', {}, services.throttle.unauthenticated);
  const down = services.clusterLimits?.downAnswers ?? { allow: 0, deny: 0 };
  out.family('switchyard_rate_limit_store_down_total', 'counter', 'Token leases of scope-cluster rate limits answered without Redis, by the step\'s onStoreDown (allow: a batch of 10 tokens; deny: 503 for 1 s).');
  for (const o of ['allow', 'deny'] as const) out.sample('switchyard_rate_limit_store_down_total', { on_store_down: o }, down[o]);
  writeWorkerGuards(services, out);
  services.dataMetrics.write(out);
  services.keySets.write(out);
  services.discovery.write(out);
  await writeWorkerLoad(services, out);
  writeTargetHealth(services, out);
  return new Reply(200, out.text(), 'text/plain; version=0.0.4; charset=utf-8');
};

/** Asked of the workers now (a worker that does not answer in time is left out): connections, and requests per generation. */
async function writeWorkerLoad(services: Services, out: Exposition): Promise<void> {
  const loads = await services.workerLoad.ask();
  out.family('switchyard_connections', 'gauge', 'Open data-port connections, by worker slot.');
  for (const [slot, l] of loads) out.sample('switchyard_connections', { worker: slot }, l.connections);
  const perGeneration = new Map<number, number>();
  for (const l of loads.values()) for (const g of l.generations) perGeneration.set(g.generation, (perGeneration.get(g.generation) ?? 0) + g.inFlight);
  out.family('switchyard_inflight_requests', 'gauge', 'Requests in flight on cluster routes, by generation (a replaced one drains to 0).');
  for (const [generation, n] of [...perGeneration].sort((a, b) => a[0] - b[0])) out.sample('switchyard_inflight_requests', { generation }, n);
}

/** Workers' event-loop stalls, by the step that was running ('' for none), and replacements by reason. */
function writeWorkerGuards(services: Services, out: Exposition): void {
  out.family('switchyard_worker_stalls_total', 'counter', "Workers whose event loop stalled past limits.eventLoopStallMs, by the route and step that were running ('' when no step's synchronous part was).");
  for (const s of services.workerGuards.stallCounts()) out.sample('switchyard_worker_stalls_total', { tenant: s.tenant, route: s.route, step: s.step }, s.n);
  out.family('switchyard_worker_replacements_total', 'counter', 'Workers replaced while the node ran, by reason: stall (killed), heap (drained), restart (drained).');
  for (const [reason, n] of Object.entries(services.workerGuards.replacementCounts())) out.sample('switchyard_worker_replacements_total', { reason }, n);
}

/** Targets of clusters with health checks or outlier detection: in rotation or not, and ejections so far. */
function writeTargetHealth(services: Services, out: Exposition): void {
  out.family('switchyard_target_healthy', 'gauge', 'A target of a cluster with health checks or outlier detection: 1 in rotation, 0 out (unhealthy or ejected).');
  const healthy = new Map<string, [string, string, boolean]>();
  for (const [cluster, target] of services.outliers.watched()) healthy.set(`${cluster}|${target}`, [cluster, target, true]);
  for (const t of services.health.states()) healthy.set(`${t.cluster}|${t.target}`, [t.cluster, t.target, t.state !== 'unhealthy']);
  for (const [cluster, target, up] of healthy.values()) {
    const ejected = services.outliers.ejectedUntil(cluster, target) !== null;
    out.sample('switchyard_target_healthy', { ...clusterNames(cluster), target }, up && !ejected ? 1 : 0);
  }
  out.family('switchyard_target_ejections_total', 'counter', 'Times a target was ejected as an outlier.');
  for (const [cluster, target, n] of services.outliers.ejectionCounts()) out.sample('switchyard_target_ejections_total', { ...clusterNames(cluster), target }, n);
}
