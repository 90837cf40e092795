import { Reply, type OpHandler } from '../op-context.js';
import type { Services } from '../../supervisor/services.js';
import { OPERATIONS } from '../contract.js';
import { openApiDocument } from '../openapi.js';
import { stepCatalog } from '../../steps/registry.js';
import { consoleModel } from '../console-nav.js';
import { SvcError } from '../../shared/errors.js';
import { isTenantName } from '../../shared/tenant-name.js';

export const health: OpHandler<Services> = () => ({ ok: true });

export const openapi: OpHandler<Services> = ({ services }) => openApiDocument(OPERATIONS, services.version);

export const whoami: OpHandler<Services> = ({ identity }) => ({
  kind: identity!.kind,
  tenant: identity!.tenant,
  masks: identity!.masks,
  scopes: identity!.scopes,
});

/**
 * Each worker's `connections` and `generations` (the current one first, then each replaced
 * one still draining) are asked of the workers per call; one that does not answer in time
 * is shown without them.
 */
export const clusterStatus: OpHandler<Services> = async ({ services }) => {
  const loads = await services.workerLoad.ask();
  return {
    supervisor: {
      pid: process.pid,
      uptimeSeconds: Math.round((Date.now() - services.startedAt) / 1000),
      startedAt: new Date(services.startedAt).toISOString(),
      version: services.version,
    },
    generation: services.publisher.currentId(),
    volume: services.volume.file ? 'virtual' : 'memory',
    workers: services.pool.status().map((w) => ({ ...w, ...loads.get(w.slot) })),
  };
};

export const consoleNav: OpHandler<Services> = ({ identity, query }) => {
  const requested = query.get('tenant');
  if (requested !== null && !isTenantName(requested)) {
    throw new SvcError('Svc.Request.BadQuery', `Invalid tenant name ${JSON.stringify(requested)}`);
  }
  const id = identity!;
  return { identity: { kind: id.kind, tenant: id.tenant, scopes: id.scopes }, ...consoleModel(id, requested) };
};

export const steps: OpHandler<Services> = () => ({ steps: stepCatalog() });

/** Prometheus text exposition. Counters are since the supervisor started. */
export const metrics: OpHandler<Services> = ({ services }) => {
  const workers = services.pool.status();
  const lines = [
    '# HELP switchyard_generation The generation the workers serve.',
    '# TYPE switchyard_generation gauge',
    `switchyard_generation ${services.publisher.currentId()}`,
    '# HELP switchyard_workers Worker processes by state.',
    '# TYPE switchyard_workers gauge',
    ...[...new Set(workers.map((w) => w.state))].map((s) => `switchyard_workers{state="${s}"} ${workers.filter((w) => w.state === s).length}`),
    '# HELP switchyard_admin_key_store_lookups_total Sub-key lookups in the store.',
    '# TYPE switchyard_admin_key_store_lookups_total counter',
    `switchyard_admin_key_store_lookups_total ${services.keys.lookups}`,
    '# HELP switchyard_admin_key_checksum_refusals_total Sub-key tokens refused on their checksum, without a store lookup.',
    '# TYPE switchyard_admin_key_checksum_refusals_total counter',
    `switchyard_admin_key_checksum_refusals_total ${services.subKeys.stats.refusedByChecksum}`,
    '# HELP switchyard_admin_auth_throttled_total Admin calls refused with 429 after too many failed authentications.',
    '# TYPE switchyard_admin_auth_throttled_total counter',
    `switchyard_admin_auth_throttled_total ${services.throttle.throttled}`,
    '# HELP switchyard_admin_auth_failures_total Admin calls refused with 401: no token, or one no key matches.',
    '# TYPE switchyard_admin_auth_failures_total counter',
    `switchyard_admin_auth_failures_total ${services.throttle.unauthenticated}`,
  ];
  return new Reply(200, lines.join('\n') + '\n', 'text/plain; version=0.0.4; charset=utf-8');
};
