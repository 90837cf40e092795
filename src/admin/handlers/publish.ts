import type { OpHandler } from '../op-context.js';
import { Reply, ownTransaction, type AuditNote } from '../op-context.js';
import type { Services } from '../services.js';
import { errorEnvelope, rejectedMessage } from '../../shared/errors.js';
import { intQuery, intSegment } from '../int-param.js';

export const dryRun: OpHandler<Services> = async ({ params, services, traceId }) => {
  services.quotas.takeDryRun(params.tenant!);
  const r = await services.publisher.dryRun(params.tenant!);
  if (r.success) return r;
  return new Reply(422, errorEnvelope('Svc.Publish.Rejected', traceId, rejectedMessage(r.issues.length), { ...r }));
};

/** Notes the generation and appends the audit record inside the publish's own transaction. */
export const committing = (audit: AuditNote) => async (generation: number) => {
  audit.generation = generation;
  await audit.commit?.();
};

export const go: OpHandler<Services> = ownTransaction(async ({ params, services, audit }) => {
  services.quotas.takePublish(params.tenant!);
  const r = await services.publisher.go(params.tenant!, committing(audit));
  audit.generation = r.generation;
  return r;
});

export const history: OpHandler<Services> = async ({ params, services, query }) => {
  const limit = intQuery(query, 'limit', 1, 1000) ?? 100;
  return { tenant: params.tenant, current: services.publisher.currentId(), items: await services.generations.history(params.tenant!, limit) };
};

export const rollback: OpHandler<Services> = ownTransaction(async ({ params, services, audit }) => {
  const to = intSegment(params.generation, 'generation');
  services.quotas.takePublish(params.tenant!);
  const r = await services.publisher.rollback(params.tenant!, to, committing(audit));
  audit.generation = r.generation;
  return r;
});
