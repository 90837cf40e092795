import { ownTransaction, type OpHandler } from '../op-context.js';
import { committing } from './publish.js';
import type { Services } from '../services.js';
import { SvcError } from '../../shared/errors.js';
import { sealCertKey, WRITE_ONLY } from '../cert-at-rest.js';
import { resolveKeys } from '../state/cert-keys.js';
import { accessDenial } from '../authorize.js';
import { operationById } from '../contract.js';
import { entityKey, parseStateSteps, stateDocument, type StateEntity } from '../state/state-document.js';
import { planStateSteps, type Plan } from '../state/state-plan.js';
import { runSliced } from '../../shared/cpu-slices.js';
import type { CertDoc } from '../../compiler/documents.js';
import type { Kind } from '../../contracts/entities.js';

type Against = 'drafts' | 'published';

/** The tenant's entities as published, or as its next publish would make them (drafts over published, staged deletes gone). */
async function currentState(services: Services, tenant: string, against: Against): Promise<StateEntity[]> {
  const published = new Map(
    (await services.entities.published(tenant))
      .map((e) => [entityKey(e.kind, e.name), { kind: e.kind, name: e.name, doc: e.doc as Record<string, unknown> }]),
  );
  if (against === 'drafts') {
    for (const d of await services.entities.drafts(tenant)) {
      if (d.doc === null) published.delete(entityKey(d.kind, d.name));
      else published.set(entityKey(d.kind, d.name), { kind: d.kind, name: d.name, doc: d.doc as Record<string, unknown> });
    }
  }
  return [...published.values()];
}

const againstOf = (v: unknown): Against => {
  if (v === undefined || v === 'drafts') return 'drafts';
  if (v === 'published') return 'published';
  throw new SvcError('Svc.Request.BadParam', `against must be "drafts" or "published", not ${JSON.stringify(v)}`);
};

/** A cert's private key is never shown: the stored one as "(write-only)". */
const masked = (e: StateEntity): StateEntity => (e.kind === 'cert' ? { ...e, doc: { ...e.doc, privateKey: WRITE_ONLY } } : e);

/** The entities of `body.state`, checked once per call and in slices (a sync plans twice with them). */
async function entitiesOf(state: unknown, tenant: string): Promise<StateEntity[]> {
  const parsed = await runSliced(parseStateSteps(state, tenant));
  if (!parsed.ok) {
    const first = parsed.errors[0]!;
    throw new SvcError('Svc.Config.Invalid', `Invalid state document at ${first.path || '/'}: ${first.message}`, { errors: parsed.errors });
  }
  return parsed.entities;
}

/** The plan of applying the file's entities; private keys never appear in its field changes. */
async function planOf(services: Services, tenant: string, entities: readonly StateEntity[], against: Against, prune: boolean): Promise<{ plan: Plan; desired: StateEntity[] }> {
  const current = await currentState(services, tenant, against);
  // "(write-only)" keys the stored one: a key the drafts hold counts too (an export of drafts diffed against what serves).
  const keysFrom = against === 'drafts' ? current : [...current, ...(await currentState(services, tenant, 'drafts'))];
  const desired = resolveKeys(services, tenant, entities, keysFrom);
  const plan = await runSliced(planStateSteps(current, desired, prune));
  for (const item of plan.items) {
    for (const c of item.changes ?? []) {
      if (item.kind !== 'cert' || c.pointer !== '/privateKey') continue;
      if ('old' in c) c.old = WRITE_ONLY;
      if ('new' in c) c.new = WRITE_ONLY;
    }
  }
  return { plan, desired };
}

const bodyOf = (body: unknown): Record<string, unknown> => {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new SvcError('Svc.Config.Invalid', 'The request needs a JSON body {state, …}', { errors: [{ path: '', message: 'missing body' }] });
  }
  return body as Record<string, unknown>;
};

const flag = (v: unknown, name: string, fallback: boolean): boolean => {
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw new SvcError('Svc.Request.BadParam', `${name} must be true or false`);
  return v;
};

export const exportState: OpHandler<Services> = async ({ params, query, services }) => {
  const tenant = params.tenant!;
  return stateDocument(tenant, (await currentState(services, tenant, againstOf(query.get('state') ?? undefined))).map(masked));
};

/** A read: the plan of a state document against the drafts (default) or the published state; the file is the whole state unless `prune: false`. */
export const diff: OpHandler<Services> = async ({ params, body, services }) => {
  const b = bodyOf(body);
  const { plan } = await planOf(services, params.tenant!, await entitiesOf(b.state, params.tenant!), againstOf(b.against), flag(b.prune, 'prune', true));
  return { tenant: params.tenant, against: againstOf(b.against), ...plan };
};

/**
 * Applies a state document as drafts in one transaction: creates and updates, deletes only
 * with `prune`. With `publish`, the compile runs in that transaction and a failure undoes
 * it all; `dryRun` answers the plan (and, with `publish`, the compile's verdict) and applies
 * nothing. One audit record names the counts.
 */
export const sync: OpHandler<Services> = ownTransaction(async ({ params, body, services, identity, audit }) => {
  const tenant = params.tenant!;
  const b = bodyOf(body);
  const prune = flag(b.prune, 'prune', false);
  const publish = flag(b.publish, 'publish', false);
  const dryRun = flag(b.dryRun, 'dryRun', false);
  if (publish && identity) {
    const denied = accessDenial(operationById('publish.go'), tenant, identity);
    if (denied) throw denied;
  }
  const entities = await entitiesOf(b.state, tenant);
  // The plan is made again inside the transaction that applies it: a publish may wait in the
  // publisher's queue, and drafts written meanwhile must be planned against, not overwritten blindly.
  let plan = (await planOf(services, tenant, entities, 'drafts', prune)).plan;
  const counted = () => {
    const { create, update, delete: deleted } = plan.counts;
    audit.target = `sync: ${create} created, ${update} updated, ${deleted} deleted`;
  };
  counted();
  // Planned again and applied under the tenant's lock: deletes first (they make room), then
  // the writes through the quotas as one batch (checked in the plan's order, refused whole).
  const apply = async () => {
    await services.quotas.lock(tenant);
    const now = await planOf(services, tenant, entities, 'drafts', prune);
    plan = now.plan;
    const want = new Map(now.desired.map((e) => [entityKey(e.kind, e.name), e]));
    const deletes = plan.items.filter((i) => i.action === 'delete').map((i) => ({ kind: i.kind, name: i.name }));
    if (deletes.length > 0) await services.entities.stageDeletes(tenant, deletes);
    const writes = plan.items
      .filter((i) => i.action === 'create' || i.action === 'update')
      .map((i) => ({ kind: i.kind, name: i.name, doc: stored(services, tenant, i.kind, i.name, want.get(entityKey(i.kind, i.name))!.doc) }));
    if (writes.length > 0) await services.quotas.setDrafts(tenant, writes);
    counted();
  };
  if (dryRun) {
    if (publish) services.quotas.takeDryRun(tenant);
    const verdict = publish ? { publish: await services.publisher.tryApply(tenant, apply) } : {};
    return { tenant, dryRun: true, ...plan, ...verdict };
  }
  if (!publish) {
    await services.volume.db.transaction(async () => {
      await apply();
      await audit.commit?.();
    }, { tenant });
    return { tenant, ...plan };
  }
  services.quotas.takePublish(tenant);
  const published = await services.publisher.go(tenant, committing(audit), apply);
  audit.generation = published.generation;
  return { tenant, ...plan, publish: published };
});

/** A document as `config set` would store it: a cert's key sealed. */
function stored(services: Services, tenant: string, kind: Kind, name: string, doc: Record<string, unknown>): unknown {
  return kind === 'cert' ? sealCertKey(doc as CertDoc, tenant, name, services.secretBox) : doc;
}
