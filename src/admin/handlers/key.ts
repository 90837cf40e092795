import * as v from 'valibot';
import type { OpHandler } from '../op-context.js';
import { Reply } from '../op-context.js';
import type { Services } from '../services.js';
import { SvcError } from '../../shared/errors.js';
import { firstUncovered } from '../scopes.js';
import { FAMILIES } from '../../contracts/scopes.js';
import { fingerprint, newSubKey, randomBase62 } from '../keys/key-format.js';
import type { KeyRecord } from '../../store/key-repo.js';

const SCOPE = new RegExp(`^(\\*|(${FAMILIES.join('|')}):(read|write|\\*))$`);
const MAX_TTL_SECONDS = 10 * 365 * 24 * 3600;

const IssueBody = v.strictObject({
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(64), v.regex(/^[\x20-\x7e]+$/, 'printable ASCII only')),
  scopes: v.pipe(v.array(v.pipe(v.string(), v.regex(SCOPE, `a scope is * or {family}:{read|write|*} with family one of ${FAMILIES.join(', ')}`))), v.minLength(1), v.maxLength(64)),
  ttlSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_TTL_SECONDS))),
});

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function stateOf(k: KeyRecord, now: number): 'active' | 'revoked' | 'expired' {
  if (k.revokedAt !== null) return 'revoked';
  if (k.expiresAt !== null && k.expiresAt <= now) return 'expired';
  return 'active';
}

function view(k: KeyRecord, now: number, lastUsedAt: number | null) {
  return {
    id: k.id,
    name: k.name,
    tenant: k.tenant,
    scopes: k.scopes,
    issuer: k.issuer,
    state: stateOf(k, now),
    createdAt: iso(k.createdAt),
    expiresAt: iso(k.expiresAt),
    revokedAt: iso(k.revokedAt),
    lastUsedAt: iso(lastUsedAt),
  };
}

export const issue: OpHandler<Services> = async ({ params, body, identity, services, audit }) => {
  const parsed = v.safeParse(IssueBody, body ?? {});
  if (!parsed.success) {
    const i = parsed.issues[0];
    const path = i.path?.map((p) => p.key).join('.') ?? '';
    throw new SvcError('Svc.Key.Invalid', `${path ? `${path}: ` : ''}${i.message}`, { path });
  }
  const { name, scopes, ttlSeconds } = parsed.output;
  // A key never holds more than the key that issued it.
  for (const s of scopes) {
    const lacking = firstUncovered(s, identity!.masks);
    if (lacking) throw new SvcError('Svc.Auth.Scope', `Cannot grant ${s}: the issuing key lacks ${lacking}`, { requiredScope: lacking });
  }
  const now = Date.now();
  const token = newSubKey();
  const record: KeyRecord = {
    id: `key_${randomBase62(16)}`,
    tenant: params.tenant!,
    name,
    fingerprint: fingerprint(token),
    scopes: [...new Set(scopes)],
    issuer: identity!.id,
    createdAt: now,
    expiresAt: cappedExpiry(ttlSeconds === undefined ? null : now + ttlSeconds * 1000, identity!.expiresAt ?? null),
    revokedAt: null,
  };
  audit.target = record.id;
  if (!(await services.keys.insert(record))) throw new SvcError('Svc.Auth.Unauthenticated', 'The issuing key was revoked');
  return new Reply(201, { ...view(record, now, null), token, tokenNote: 'Shown once: only a fingerprint is stored' });
};

export const list: OpHandler<Services> = async ({ params, services }) => {
  const now = Date.now();
  return { tenant: params.tenant, items: (await services.keys.list(params.tenant!)).map((k) => view(k, now, services.keyUsage.latest(k.id, k.lastUsedAt))) };
};

/** A key issued by an expiring sub-key expires with it at the latest (also when it asked for no TTL). */
function cappedExpiry(asked: number | null, issuerExpires: number | null): number | null {
  if (issuerExpires === null) return asked;
  return asked === null ? issuerExpires : Math.min(asked, issuerExpires);
}

export const revoke: OpHandler<Services> = async ({ params, services }) => {
  // The keys it issued are revoked with it; key list shows them (the answer stays the key's view).
  if ((await services.keys.revoke(params.tenant!, params.id!, Date.now())) === null) throw notFound(params.id!);
  const k = (await services.keys.get(params.tenant!, params.id!))!;
  return view(k, Date.now(), services.keyUsage.latest(k.id, await services.keys.lastUsedAt(k.id)));
};

export const remove: OpHandler<Services> = async ({ params, services }) => {
  if (!(await services.keys.delete(params.tenant!, params.id!, Date.now()))) throw notFound(params.id!);
  return { id: params.id, tenant: params.tenant, deleted: true };
};

function notFound(id: string): SvcError {
  return new SvcError('Svc.Key.NotFound', `No key ${id} in this tenant; key list shows the ids`);
}
