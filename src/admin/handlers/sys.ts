import { Reply, type OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import { OPERATIONS } from '../contract.js';
import { openApiDocument } from '../openapi.js';
import { consoleModel } from '../console-nav.js';
import { SvcError } from '../../shared/errors.js';
import { isTenantName } from '../../shared/tenant-name.js';

export const health: OpHandler<Services> = () => ({ ok: true });

/**
 * 503 with the same body when a part is not ready, so a probe needs only the status. Answered
 * from the latest store verdict: it needs no token, and a call waiting on a stalled store
 * would hold an admin connection the cap cannot close.
 */
export const ready: OpHandler<Services> = ({ services }) => {
  const report = services.readiness.latest();
  return new Reply(report.ready ? 200 : 503, report);
};

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
 * is shown without them. `readiness` is /readyz's body, after a fresh store check (the caller holds a token).
 */
export const clusterStatus: OpHandler<Services> = async ({ services }) => {
  const [loads, readiness] = await Promise.all([services.workerLoad.ask(), services.readiness.check()]);
  return {
    supervisor: {
      pid: process.pid,
      uptimeSeconds: Math.round((Date.now() - services.startedAt) / 1000),
      startedAt: new Date(services.startedAt).toISOString(),
      version: services.version,
    },
    generation: services.publisher.currentId(),
    volume: services.volume.fleet ? 'postgres' : services.volume.file ? 'virtual' : 'memory',
    readiness,
    // A slot's load is its serving worker's: a replacement starting, a standby or a replaced one draining is not asked.
    workers: services.pool.status().map((w) => (w.replacing || w.replaced || w.standby ? w : { ...w, ...loads.get(w.slot) })),
    ...(services.fleet ? { node: services.fleet.nodeId, fleet: await services.fleet.nodes().catch(() => null) } : {}),
  };
};

export const consoleNav: OpHandler<Services> = ({ identity, query }) => {
  const requested = query.get('tenant');
  if (requested !== null && !isTenantName(requested)) {
    throw new SvcError('Svc.Request.BadQuery', `Invalid tenant name ${JSON.stringify(requested)}`);
  }
  const id = identity!;
  const signedInAs = id.session === undefined ? {} : { signedInAs: id.session.name };
  return { identity: { kind: id.kind, tenant: id.tenant, scopes: id.scopes, ...signedInAs }, ...consoleModel(id, requested) };
};

/** Every step the gateway knows; a package step with its `package` and `version`. */
export const steps: OpHandler<Services> = ({ services }) => ({ steps: services.steps.catalog() });

export { metrics } from './metrics.js';
