import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SvcError } from '../../src/shared/errors.js';
import { operationById } from '../../src/admin/contract.js';
import { AuthThrottle } from '../../src/admin/auth-throttle.js';
import { Redactor } from '../../src/admin/redact.js';
import { authenticateCounted, checkNameParams, refuseThrottled } from '../../src/admin/call-gates.js';
import { CallAuditRecord, type AuditRecord } from '../../src/admin/audit-trail.js';
import { masksOf } from '../../src/admin/scopes.js';
import type { Identity } from '../../src/admin/identity.js';

const GOOD = 'good-token';
const admin: Identity = { id: 'admin', kind: 'system', tenant: null, scopes: ['*'], masks: masksOf(['*']) };
const resolvers = [{ resolve: (t: string) => (t === GOOD ? admin : null) }];
const codeOf = (fn: () => unknown): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof SvcError ? err.code : 'not a SvcError';
  }
};
const codeOfAsync = async (fn: () => Promise<unknown>): Promise<string | null> => {
  try {
    await fn();
    return null;
  } catch (err) {
    return err instanceof SvcError ? err.code : 'not a SvcError';
  }
};

test('a presented bad token is a guess; a missing header counts as unauthenticated only; a good token costs nothing', async () => {
  const t = new AuthThrottle({ burst: 1, perSecond: 1 }, () => 0);
  const op = operationById('whoami');
  assert.equal(await authenticateCounted(op, `Bearer ${GOOD}`, 'a', resolvers, t), admin);
  assert.equal(await codeOfAsync(() => authenticateCounted(op, undefined, 'a', resolvers, t)), 'Svc.Auth.Unauthenticated');
  assert.equal(t.waitMs('a'), 0, 'no header: not a guess');
  assert.equal(t.unauthenticated, 1);
  assert.equal(await codeOfAsync(() => authenticateCounted(op, 'Bearer wrong', 'a', resolvers, t)), 'Svc.Auth.Unauthenticated');
  assert.equal(t.unauthenticated, 2);
  assert.ok(t.waitMs('a') > 0, 'the guess spent the allowance');
  assert.equal(await codeOfAsync(() => authenticateCounted(op, 'Bearer wrong', 'a', resolvers, undefined)), 'Svc.Auth.Unauthenticated', 'no throttle: refused all the same');
});

test('a throttled address is refused 429 with retryAfter in whole seconds; an unauthenticated operation never is', () => {
  const t = new AuthThrottle({ burst: 1, perSecond: 0.25 }, () => 0);
  t.failed('a');
  const op = operationById('whoami');
  let refused: SvcError | null = null;
  try {
    refuseThrottled(op, 'a', t);
  } catch (err) {
    refused = err as SvcError;
  }
  assert.equal(refused?.code, 'Svc.Auth.Throttled');
  assert.equal(refused?.extra?.retryAfter, 4);
  assert.equal(codeOf(() => refuseThrottled(operationById('health'), 'a', t)), null);
  assert.equal(codeOf(() => refuseThrottled(op, 'b', t)), null);
  assert.equal(codeOf(() => refuseThrottled(op, 'a', undefined)), null);
});

test('a tenant or entity name may not be a bearer token, and a tenant must be a tenant name', () => {
  const redact = new Redactor((s) => s === 'system-secret');
  assert.equal(codeOf(() => checkNameParams({ tenant: 'default', name: 'route-a' }, redact)), null);
  assert.equal(codeOf(() => checkNameParams({ tenant: 'default', name: 'system-secret' }, redact)), 'Svc.Request.BadParam');
  assert.equal(codeOf(() => checkNameParams({ tenant: 'system-secret' }, redact)), 'Svc.Request.BadParam');
  assert.equal(codeOf(() => checkNameParams({ tenant: 'Not_A_Tenant' }, redact)), 'Svc.Request.BadParam');
  assert.equal(codeOf(() => checkNameParams({ tenant: 'sys' }, redact)), 'Svc.Request.BadParam');
});

test("a call's audit record is appended once, then only its status is corrected", async () => {
  const appended: number[] = [];
  const corrected: [number, number][] = [];
  const sink = { append: async (r: AuditRecord) => (appended.push(r.status), 7), setStatus: async (id: number, st: number) => (corrected.push([id, st]), true) };
  const record = new CallAuditRecord(sink, (status) => ({ status }) as AuditRecord);
  // Settled twice at once (the second while the first append is on its way): still one record.
  await Promise.all([record.settle(200), record.settle(200)]);
  assert.deepEqual(appended, [200]);
  assert.deepEqual(corrected, []);
  await record.settle(500);
  await record.settle(500);
  assert.deepEqual(appended, [200]);
  assert.deepEqual(corrected, [[7, 500]]);
});

test('regression: a record rolled back with its transaction is appended again when the answer settles', async () => {
  const rows = new Map<number, number>();
  let next = 0;
  const sink = {
    append: async (r: AuditRecord) => (rows.set(++next, r.status), next),
    setStatus: async (id: number, st: number) => rows.has(id) && (rows.set(id, st), true),
  };
  const record = new CallAuditRecord(sink, (status) => ({ status }) as AuditRecord);
  await record.settle(200);
  rows.clear(); // the transaction that held it rolled back
  await record.settle(503);
  assert.deepEqual([...rows], [[2, 503]]);
});
