import type { OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import { intQuery } from '../int-param.js';

/** One page of the tenant's audit trail, newest first; `next` is the `before` of the following page. */
export const list: OpHandler<Services> = async ({ params, query, services }) => {
  const limit = intQuery(query, 'limit', 1, 500) ?? 50;
  const before = intQuery(query, 'before', 1, Number.MAX_SAFE_INTEGER);
  const rows = await services.audit.list(params.tenant!, limit, before);
  return {
    tenant: params.tenant,
    items: rows.map((r) => ({
      id: r.id,
      at: new Date(r.at).toISOString(),
      identity: { id: r.identityId, kind: r.identityKind },
      tenant: r.tenant,
      operation: r.operation,
      target: r.target,
      status: r.status,
      traceId: r.traceId,
      generation: r.generation,
    })),
    next: rows.length === limit ? rows[rows.length - 1]!.id : null,
  };
};
