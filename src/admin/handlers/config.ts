import { createHash } from 'node:crypto';
import type { OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import { SvcError } from '../../shared/errors.js';
import { NAME_PATTERN, parseDocument, type CertDoc } from '../../compiler/documents.js';
import { certView, sealCertKey } from '../cert-at-rest.js';
import { isKind, type Kind } from '../../contracts/entities.js';

function kindOf(s: string | undefined): Kind {
  if (!s || !isKind(s)) throw new SvcError('Svc.Request.BadParam', `Unknown kind ${JSON.stringify(s)}; use cluster, route, orch or cert`);
  return s;
}

function nameOf(s: string | undefined): string {
  if (!s || !NAME_PATTERN.test(s)) {
    throw new SvcError('Svc.Request.BadParam', `Invalid name ${JSON.stringify(s)}: 1-128 of A-Z a-z 0-9 . _ -, starting with a letter or digit`);
  }
  return s;
}

/** A stable fingerprint of the entity's address: the same tenant/kind/name always gives the same value. */
export function logicalAddress(tenant: string, kind: string, name: string): string {
  return 'la1:' + createHash('sha256').update(`${tenant}/${kind}/${name}`).digest('base64url').slice(0, 22);
}

export const set: OpHandler<Services> = async ({ params, body, services }) => {
  const kind = kindOf(params.kind);
  const name = nameOf(params.name);
  if (body === undefined) throw new SvcError('Svc.Config.Invalid', 'The request needs a JSON body: the entity document', { errors: [{ path: '', message: 'missing body' }] });
  const parsed = parseDocument(kind, body);
  if (!parsed.ok) {
    const first = parsed.errors[0]!;
    throw new SvcError('Svc.Config.Invalid', `Invalid ${kind} document at ${first.path || '/'}: ${first.message}`, { errors: parsed.errors });
  }
  // A cert's private key is sealed before anything stores or measures it.
  const doc = kind === 'cert' ? sealCertKey(parsed.doc as CertDoc, params.tenant!, name, services.secretBox) : body;
  await services.quotas.setDraft(params.tenant!, kind, name, doc);
  return { logicalAddress: logicalAddress(params.tenant!, kind, name), generation: services.publisher.currentId() };
};

export const get: OpHandler<Services> = async ({ params, services }) => {
  const kind = kindOf(params.kind);
  const e = await services.entities.get(params.tenant!, kind, nameOf(params.name));
  if (!e) throw new SvcError('Svc.Config.NotFound', `No ${kind} ${params.name} in tenant ${params.tenant}`);
  if (kind === 'cert') {
    if (e.draft) e.draft = { ...e.draft, doc: certView(e.draft.doc) };
    if (e.published) e.published = { ...e.published, doc: certView(e.published.doc) };
  }
  return { ...e, logicalAddress: logicalAddress(e.tenant, e.kind, e.name) };
};

export const list: OpHandler<Services> = async ({ params, services }) => {
  const kind = kindOf(params.kind);
  const items = (await services.entities.list(params.tenant!, kind)).map((e) => ({
    name: e.name,
    state: e.state,
    pending: e.pending,
    publishedGeneration: e.published?.generation ?? null,
    logicalAddress: logicalAddress(e.tenant, e.kind, e.name),
  }));
  return { tenant: params.tenant, kind, items };
};

export const remove: OpHandler<Services> = async ({ params, services }) => {
  const kind = kindOf(params.kind);
  const name = nameOf(params.name);
  if (!(await services.entities.stageDelete(params.tenant!, kind, name))) {
    throw new SvcError('Svc.Config.NotFound', `No ${kind} ${name} in tenant ${params.tenant}`);
  }
  const e = await services.entities.get(params.tenant!, kind, name);
  return {
    logicalAddress: logicalAddress(params.tenant!, kind, name),
    generation: services.publisher.currentId(),
    pending: e?.pending ?? null,
  };
};
