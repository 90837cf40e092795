import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { request, envelopeProblem, type HttpResult } from './helpers/http.js';
import { ROOT_KEY } from './helpers/admin.js';
import { BOUNDED, sleep } from './helpers/wait.js';
import {
  CHECKSUM_REFUSALS,
  LOOKUPS,
  NO_THROTTLE,
  SUB_KEY,
  breakChecksum,
  deleteKeyRaw,
  forgeWellFormedKey,
  issueKey,
  issueKeyRaw,
  listKeys,
  listKeysRaw,
  metrics,
  revokeKeyRaw,
  whoami,
  type KeyView,
} from './helpers/keys.js';

/** The admin contract's scope families: every family, with bits 1 read, 2 write, 4 lifecycle (granted with write). */
const FAMILIES = ['sys', 'cluster', 'metrics', 'config', 'publish', 'key', 'plugin', 'audit'];
const masks = (granted: Record<string, number>) => Object.fromEntries(FAMILIES.map((f) => [f, granted[f] ?? 0]));
const VIEW_FIELDS = ['createdAt', 'expiresAt', 'id', 'issuer', 'lastUsedAt', 'name', 'revokedAt', 'scopes', 'state', 'tenant'];
const isIso = (s: unknown) => typeof s === 'string' && !Number.isNaN(Date.parse(s)) && new Date(s).toISOString() === s;

function refused(r: HttpResult, status: number, code: string, what: string): void {
  assert.equal(r.status, status, `${what}: ${r.status} ${r.text}`);
  assert.equal(envelopeProblem(r), null, `${what}: an error envelope`);
  assert.equal(r.json.code, code, `${what}: ${r.text}`);
}

test('a sub-key is issued, used, listed without its plaintext, revoked, then deleted', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: NO_THROTTLE });
  const root = gw.tokens.root!;

  const before = Date.now();
  const r = await issueKeyRaw(gw, root, 'acme', { name: 'ci', scopes: ['config:read', 'key:read'] });
  assert.equal(r.status, 201, r.text);
  const k = r.json;
  assert.deepEqual(Object.keys(k).sort(), [...VIEW_FIELDS, 'token', 'tokenNote'].sort());
  assert.match(k.id, /^\S+$/);
  assert.equal(k.name, 'ci');
  assert.equal(k.tenant, 'acme', 'bound to the tenant of the path');
  assert.deepEqual(k.scopes, ['config:read', 'key:read']);
  assert.equal(k.issuer, 'root');
  assert.equal(k.state, 'active');
  assert.ok(isIso(k.createdAt), `createdAt ${k.createdAt}`);
  assert.ok(Date.parse(k.createdAt) >= before - 1000 && Date.parse(k.createdAt) <= Date.now() + 1000);
  assert.equal(k.expiresAt, null);
  assert.equal(k.revokedAt, null);
  assert.equal(k.lastUsedAt, null);
  assert.match(k.token, SUB_KEY);
  assert.equal(typeof k.tokenNote, 'string');
  const token: string = k.token;

  await t.test('the sub-key is a bearer token of its tenant', async () => {
    const w = await whoami(gw, token);
    assert.equal(w.status, 200, w.text);
    assert.deepEqual(w.json, { kind: 'tenant', tenant: 'acme', masks: masks({ config: 1, key: 1 }), scopes: ['config:read', 'key:read'] });
    assert.ok(!w.text.includes(token));
    const cl = await request(`${gw.adminUrl}/api/v1/acme/config/list/route`, { token });
    assert.equal(cl.status, 200, cl.text);
    assert.equal(cl.json.tenant, 'acme');
    assert.deepEqual(cl.json.items, []);
    // a scope it does not hold
    const set = await request(`${gw.adminUrl}/api/v1/acme/config/set/route/r`, { method: 'POST', token, body: { pathPrefix: '/r', directResponse: { statusCode: 200 } } });
    refused(set, 403, 'Svc.Auth.Scope', 'config set with config:read');
    assert.equal(set.json.requiredScope, 'config:write');
  });

  await t.test('the list shows it, used, with no plaintext and no fingerprint', async () => {
    for (const who of [root, token]) {
      const l = await listKeysRaw(gw, who, 'acme');
      assert.equal(l.status, 200, l.text);
      assert.ok(!l.text.includes(token), 'the plaintext is not in the list');
      assert.ok(!l.text.includes('syk_'), 'no token of any kind is in the list');
      assert.ok(!/[0-9a-f]{64}/.test(l.text), 'no fingerprint either');
      assert.equal(l.json.tenant, 'acme');
      assert.equal(l.json.items.length, 1);
      const item = l.json.items[0] as KeyView;
      assert.deepEqual(Object.keys(item).sort(), VIEW_FIELDS);
      const { lastUsedAt, ...rest } = item;
      const { token: _t, tokenNote: _n, lastUsedAt: _l, ...issued } = k;
      assert.deepEqual(rest, issued, 'the same record as issued');
      assert.ok(isIso(lastUsedAt), `lastUsedAt is set after use: ${lastUsedAt}`);
      assert.ok(Date.parse(lastUsedAt!) >= Date.parse(k.createdAt) && Date.parse(lastUsedAt!) <= Date.now() + 1000);
    }
    assert.deepEqual((await listKeys(gw, root, 'globex')).items, [], 'another tenant lists none of it');
  });

  await t.test('revoked: refused from the next request on, listed as revoked', async () => {
    const rv = await revokeKeyRaw(gw, root, 'acme', k.id);
    assert.equal(rv.status, 200, rv.text);
    assert.ok(!rv.text.includes('syk_'));
    assert.deepEqual(Object.keys(rv.json).sort(), VIEW_FIELDS);
    assert.equal(rv.json.id, k.id);
    assert.equal(rv.json.state, 'revoked');
    assert.ok(isIso(rv.json.revokedAt));
    assert.ok(isIso(rv.json.lastUsedAt));

    for (const probe of [() => whoami(gw, token), () => request(`${gw.adminUrl}/api/v1/acme/config/list/route`, { token })]) {
      const after = await probe();
      refused(after, 401, 'Svc.Auth.Unauthenticated', 'a revoked key');
    }
    const item = (await listKeys(gw, root, 'acme')).items.find((i) => i.id === k.id)!;
    assert.equal(item.state, 'revoked');
    assert.equal(item.revokedAt, rv.json.revokedAt);

    const again = await revokeKeyRaw(gw, root, 'acme', k.id);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.revokedAt, rv.json.revokedAt, 'the first revocation time is kept');

    refused(await revokeKeyRaw(gw, root, 'acme', 'key_doesnotexist'), 404, 'Svc.Key.NotFound', 'revoke an unknown id');
    refused(await revokeKeyRaw(gw, root, 'globex', k.id), 404, 'Svc.Key.NotFound', "revoke through another tenant's path");
  });

  await t.test('deleted: gone from the list; a second delete is 404', async () => {
    refused(await deleteKeyRaw(gw, root, 'globex', k.id), 404, 'Svc.Key.NotFound', "delete through another tenant's path");
    const d = await deleteKeyRaw(gw, root, 'acme', k.id);
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(d.json, { id: k.id, tenant: 'acme', deleted: true });
    assert.deepEqual((await listKeys(gw, root, 'acme')).items, []);
    refused(await deleteKeyRaw(gw, root, 'acme', k.id), 404, 'Svc.Key.NotFound', 'delete again');
    refused(await revokeKeyRaw(gw, root, 'acme', k.id), 404, 'Svc.Key.NotFound', 'revoke after delete');
    refused(await whoami(gw, token), 401, 'Svc.Auth.Unauthenticated', 'a deleted key');
  });

  await t.test('a bad issue body is 400 Svc.Key.Invalid and issues nothing', async () => {
    const bodies: unknown[] = [
      {},
      { scopes: ['config:read'] },
      { name: '', scopes: ['config:read'] },
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['config:admin'] },
      { name: 'x', scopes: ['nosuch:read'] },
      { name: 'x', scopes: 'config:read' },
      { name: 'x', scopes: ['config:read'], ttlSeconds: 0 },
      { name: 'x', scopes: ['config:read'], ttlSeconds: 1.5 },
      { name: 'x', scopes: ['config:read'], tenant: 'globex' },
    ];
    for (const body of bodies) refused(await issueKeyRaw(gw, root, 'acme', body), 400, 'Svc.Key.Invalid', `issue ${JSON.stringify(body)}`);
    assert.deepEqual((await listKeys(gw, root, 'acme')).items, []);
  });

  // Known bug (reported, not fixed here): the revoke handler reads lastUsedAt from the
  // store without flushing the pending usage first (key list does flush), so a key used
  // in the last second is revoked with lastUsedAt: null.
  await t.test('the revoke answer shows a use made just before it', async () => {
    const k2 = await issueKey(gw, root, 'acme', { name: 'used-then-revoked', scopes: ['config:read'] });
    assert.equal((await whoami(gw, k2.token)).status, 200);
    const rv = await revokeKeyRaw(gw, root, 'acme', k2.id);
    assert.equal(rv.status, 200, rv.text);
    const listed = (await listKeys(gw, root, 'acme')).items.find((i) => i.id === k2.id)!;
    assert.ok(isIso(listed.lastUsedAt), 'the list shows the use');
    assert.equal(rv.json.lastUsedAt, listed.lastUsedAt, 'the revoke answer shows the same use');
  });
});

test('a key issued with ttlSeconds 1 is refused two seconds later and listed as expired', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const root = gw.tokens.root!;
  const t0 = Date.now();
  const k = await issueKey(gw, root, 'acme', { name: 'short', scopes: ['config:read'], ttlSeconds: 1 });
  assert.ok(isIso(k.expiresAt));
  assert.equal(Date.parse(k.expiresAt!) - Date.parse(k.createdAt), 1000, 'expiresAt = createdAt + ttl');
  if (Date.now() - t0 < 700) {
    const w = await whoami(gw, k.token);
    assert.equal(w.status, 200, `usable before it expires: ${w.text}`);
  }
  assert.equal((await listKeys(gw, root, 'acme')).items[0]!.state, 'active');

  await sleep(Math.max(0, Date.parse(k.createdAt) + 2000 - Date.now()));
  refused(await whoami(gw, k.token), 401, 'Svc.Auth.Unauthenticated', 'an expired key');
  refused(await request(`${gw.adminUrl}/api/v1/acme/config/list/route`, { token: k.token }), 401, 'Svc.Auth.Unauthenticated', 'an expired key');
  const item = (await listKeys(gw, root, 'acme')).items.find((i) => i.id === k.id);
  assert.ok(item, 'an expired key is still listed');
  assert.equal(item.state, 'expired');
  assert.equal(item.expiresAt, k.expiresAt);
});

test('a sub-key never grants more than the key that issues it', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const root = gw.tokens.root!;
  const issuer = await issueKey(gw, root, 'acme', { name: 'issuer', scopes: ['key:write', 'config:read'] });
  const reader = await issueKey(gw, root, 'acme', { name: 'reader', scopes: ['config:read'] });

  const cfgWrite = await issueKeyRaw(gw, issuer.token, 'acme', { name: 'more', scopes: ['config:write'] });
  refused(cfgWrite, 403, 'Svc.Auth.Scope', 'granting config:write');
  assert.equal(cfgWrite.json.requiredScope, 'config:write');
  assert.equal(cfgWrite.json.message, 'Cannot grant config:write: the issuing key lacks config:write');

  const star = await issueKeyRaw(gw, issuer.token, 'acme', { name: 'all', scopes: ['*'] });
  refused(star, 403, 'Svc.Auth.Scope', 'granting *');
  assert.equal(typeof star.json.requiredScope, 'string');
  assert.ok(!['key:write', 'config:read'].includes(star.json.requiredScope), `names a scope the issuer lacks: ${star.json.requiredScope}`);
  assert.equal(star.json.message, `Cannot grant *: the issuing key lacks ${star.json.requiredScope}`);

  const mixed = await issueKeyRaw(gw, issuer.token, 'acme', { name: 'mixed', scopes: ['config:read', 'publish:write'] });
  refused(mixed, 403, 'Svc.Auth.Scope', 'one uncovered scope among covered ones');
  assert.equal(mixed.json.requiredScope, 'publish:write');
  assert.match(mixed.json.message, /^Cannot grant publish:write: the issuing key lacks publish:write$/);

  const famStar = await issueKeyRaw(gw, issuer.token, 'acme', { name: 'cfgall', scopes: ['config:*'] });
  refused(famStar, 403, 'Svc.Auth.Scope', 'granting config:*');
  assert.equal(famStar.json.requiredScope, 'config:write');

  // covered: issued, bound to the issuer's tenant, issuer recorded
  const child = await issueKey(gw, issuer.token, 'acme', { name: 'child', scopes: ['config:read'] });
  assert.equal(child.tenant, 'acme');
  assert.equal(child.issuer, issuer.id);
  assert.deepEqual(child.scopes, ['config:read']);
  const cw = await whoami(gw, child.token);
  assert.deepEqual(cw.json, { kind: 'tenant', tenant: 'acme', masks: masks({ config: 1 }), scopes: ['config:read'] });
  // as much as it holds itself
  const peer = await issueKey(gw, issuer.token, 'acme', { name: 'peer', scopes: ['key:write', 'config:read'] });
  assert.equal(peer.issuer, issuer.id);

  // not in another tenant, whatever the scopes
  refused(await issueKeyRaw(gw, issuer.token, 'globex', { name: 'x', scopes: ['config:read'] }), 403, 'Svc.Auth.TenantScope', 'issuing in another tenant');

  const noKeyWrite = await issueKeyRaw(gw, reader.token, 'acme', { name: 'x', scopes: ['config:read'] });
  refused(noKeyWrite, 403, 'Svc.Auth.Scope', 'issuing without key:write');
  assert.equal(noKeyWrite.json.requiredScope, 'key:write');
  assert.match(noKeyWrite.json.message, /key:write/);

  const names = (await listKeys(gw, root, 'acme')).items.map((i) => i.name).sort();
  assert.deepEqual(names, ['child', 'issuer', 'peer', 'reader'], 'the refused issues left nothing behind');
  assert.deepEqual((await listKeys(gw, root, 'globex')).items, []);
});

test('a sub-key stays inside its tenant; a * system key issues in any tenant', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY, { id: 'acme-sys', scopes: ['key:*'], tenant: 'acme' }] });
  const root = gw.tokens.root!;

  const tenants = ['acme', 'globex', 'default'];
  const issued = new Map<string, string>();
  for (const tenant of tenants) {
    const k = await issueKey(gw, root, tenant, { name: `all-${tenant}`, scopes: ['*'] });
    assert.equal(k.tenant, tenant);
    assert.equal(k.issuer, 'root');
    issued.set(tenant, k.token);
  }
  for (const tenant of tenants) {
    const items = (await listKeys(gw, root, tenant)).items;
    assert.deepEqual(items.map((i) => [i.name, i.tenant]), [[`all-${tenant}`, tenant]], `only its own key in ${tenant}`);
  }

  const acme = issued.get('acme')!;
  const w = await whoami(gw, acme);
  assert.equal(w.status, 200, w.text);
  assert.deepEqual(w.json, { kind: 'tenant', tenant: 'acme', masks: masks(Object.fromEntries(FAMILIES.map((f) => [f, 7]))), scopes: ['*'] });
  const narrow = await issueKey(gw, root, 'acme', { name: 'narrow', scopes: ['config:read', 'key:write', 'plugin:*'] });
  assert.deepEqual((await whoami(gw, narrow.token)).json, {
    kind: 'tenant',
    tenant: 'acme',
    masks: masks({ config: 1, key: 6, plugin: 7 }),
    scopes: ['config:read', 'key:write', 'plugin:*'],
  });

  // its own tenant: everything
  assert.equal((await request(`${gw.adminUrl}/api/v1/acme/config/list/route`, { token: acme })).status, 200);
  assert.equal((await listKeysRaw(gw, acme, 'acme')).status, 200);
  assert.equal((await request(`${gw.adminUrl}/api/v1/acme/audit/list`, { token: acme })).status, 200);

  // another tenant: nothing, even with *
  for (const other of ['globex', 'default']) {
    refused(await request(`${gw.adminUrl}/api/v1/${other}/config/list/route`, { token: acme }), 403, 'Svc.Auth.TenantScope', `${other} config list`);
    refused(await listKeysRaw(gw, acme, other), 403, 'Svc.Auth.TenantScope', `${other} key list`);
    refused(await issueKeyRaw(gw, acme, other, { name: 'x', scopes: ['config:read'] }), 403, 'Svc.Auth.TenantScope', `${other} key issue`);
    refused(await request(`${gw.adminUrl}/api/v1/${other}/publish/go`, { method: 'POST', token: acme }), 403, 'Svc.Auth.TenantScope', `${other} publish go`);
  }
  const globexKeyId = (await listKeys(gw, root, 'globex')).items[0]!.id;
  refused(await revokeKeyRaw(gw, acme, 'globex', globexKeyId), 403, 'Svc.Auth.TenantScope', 'revoking in another tenant');
  refused(await deleteKeyRaw(gw, acme, 'globex', globexKeyId), 403, 'Svc.Auth.TenantScope', 'deleting in another tenant');
  assert.equal((await whoami(gw, issued.get('globex')!)).status, 200, 'the globex key still works');

  // instance-level paths: nothing, even with *
  refused(await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token: acme }), 403, 'Svc.Auth.TenantScope', 'cluster status');
  refused(await request(`${gw.adminUrl}/metrics`, { token: acme }), 403, 'Svc.Auth.TenantScope', 'metrics');
  assert.equal((await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token: root })).status, 200, 'the root key may');

  // a tenant-bound system key from worker.json issues in its own tenant only
  const sys = gw.tokens['acme-sys']!;
  const fromSys = await issueKey(gw, sys, 'acme', { name: 'from-sys', scopes: ['key:read'] });
  assert.equal(fromSys.issuer, 'acme-sys');
  refused(await issueKeyRaw(gw, sys, 'globex', { name: 'x', scopes: ['key:read'] }), 403, 'Svc.Auth.TenantScope', 'tenant-bound system key in globex');
  refused(await issueKeyRaw(gw, sys, 'acme', { name: 'x', scopes: ['config:read'] }), 403, 'Svc.Auth.Scope', 'tenant-bound system key beyond its scopes');
});

test('a wrong checksum is refused without a store lookup; a well-formed unknown key costs one', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY], edit: NO_THROTTLE });
  const root = gw.tokens.root!;
  const k = await issueKey(gw, root, 'acme', { name: 'victim', scopes: ['config:read'] });

  const m0 = await metrics(gw, root);
  assert.equal(typeof m0[LOOKUPS], 'number', `${LOOKUPS} is exported`);
  assert.equal(typeof m0[CHECKSUM_REFUSALS], 'number', `${CHECKSUM_REFUSALS} is exported`);
  const m0again = await metrics(gw, root);
  assert.deepEqual([m0again[LOOKUPS], m0again[CHECKSUM_REFUSALS]], [m0[LOOKUPS], m0[CHECKSUM_REFUSALS]], 'a system key costs no lookup');

  // the real key: one lookup per request
  assert.equal((await whoami(gw, k.token)).status, 200);
  const m1 = await metrics(gw, root);
  assert.equal(m1[LOOKUPS], m0[LOOKUPS]! + 1, 'a valid sub-key is looked up once');
  assert.equal(m1[CHECKSUM_REFUSALS], m0[CHECKSUM_REFUSALS]);

  // same shape, wrong checksum: refused on the checksum alone
  const broken = [breakChecksum(k.token, 'random'), breakChecksum(k.token, 'checksum'), k.token.slice(0, -1), `${k.token}0`, 'syk_' + 'A'.repeat(38)].filter(
    (b) => b !== k.token,
  );
  assert.equal(broken.length, 5);
  assert.equal(broken[0]!.length, k.token.length);
  for (const b of broken) {
    const r = await whoami(gw, b);
    refused(r, 401, 'Svc.Auth.Unauthenticated', `broken token ${b.slice(0, 8)}…`);
    assert.ok(!r.text.includes(b));
  }
  const m2 = await metrics(gw, root);
  assert.equal(m2[LOOKUPS], m1[LOOKUPS], 'no store lookup for a wrong checksum');
  assert.equal(m2[CHECKSUM_REFUSALS], m1[CHECKSUM_REFUSALS]! + broken.length, 'each refused on its checksum');

  // a token without the prefix is not a sub-key: no lookup, no checksum refusal
  refused(await whoami(gw, 'x'.repeat(40)), 401, 'Svc.Auth.Unauthenticated', 'an unknown non-sub-key token');
  const m3 = await metrics(gw, root);
  assert.deepEqual([m3[LOOKUPS], m3[CHECKSUM_REFUSALS]], [m2[LOOKUPS], m2[CHECKSUM_REFUSALS]]);

  // well-formed with a valid checksum, but never issued: exactly one lookup, then 401
  const forged = forgeWellFormedKey();
  assert.match(forged, SUB_KEY);
  refused(await whoami(gw, forged), 401, 'Svc.Auth.Unauthenticated', 'a well-formed unknown key');
  const m4 = await metrics(gw, root);
  assert.equal(m4[LOOKUPS], m3[LOOKUPS]! + 1, 'a well-formed unknown key costs exactly one lookup');
  assert.equal(m4[CHECKSUM_REFUSALS], m3[CHECKSUM_REFUSALS], 'and is not a checksum refusal');

  // the real key is unharmed
  assert.equal((await whoami(gw, k.token)).status, 200);
  const m5 = await metrics(gw, root);
  assert.equal(m5[LOOKUPS], m4[LOOKUPS]! + 1);
});

/**
 * Regression: a sub-key with key:write minted keys without expiry, and they kept working
 * after their issuer expired or was revoked: a leaked one-hour key became a permanent one.
 */
test('a key issued by a sub-key expires with it at the latest and is revoked with it', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const root = gw.tokens.root!;
  const issuer = await issueKey(gw, root, 'acme', { name: 'contractor', scopes: ['key:write', 'config:read'], ttlSeconds: 3600 });
  const forever = await issueKey(gw, issuer.token, 'acme', { name: 'no-ttl', scopes: ['config:read'] });
  assert.equal(forever.expiresAt, issuer.expiresAt, 'no TTL asked: the issuer’s expiry');
  const longer = await issueKey(gw, issuer.token, 'acme', { name: 'longer', scopes: ['key:write', 'config:read'], ttlSeconds: 7200 });
  assert.equal(longer.expiresAt, issuer.expiresAt, 'a longer TTL is capped at the issuer’s expiry');
  const shorter = await issueKey(gw, issuer.token, 'acme', { name: 'shorter', scopes: ['config:read'], ttlSeconds: 60 });
  assert.equal(Date.parse(shorter.expiresAt!) - Date.parse(shorter.createdAt), 60_000, 'a shorter TTL is kept');
  const grandchild = await issueKey(gw, longer.token, 'acme', { name: 'grandchild', scopes: ['config:read'] });
  const byRoot = await issueKey(gw, root, 'acme', { name: 'root-issued', scopes: ['config:read'] });
  assert.equal(byRoot.expiresAt, null, 'a system key issues keys without expiry');

  const revoked = await revokeKeyRaw(gw, root, 'acme', issuer.id);
  assert.equal(revoked.status, 200, revoked.text);
  for (const k of [forever, longer, shorter, grandchild]) assert.equal((await whoami(gw, k.token)).status, 401, `${k.name} outlived its issuer`);
  assert.equal((await whoami(gw, byRoot.token)).status, 200, 'keys of other issuers stay');
  const states = Object.fromEntries((await listKeys(gw, root, 'acme')).items.map((k) => [k.name, k.state]));
  assert.deepEqual(states, { contractor: 'revoked', 'no-ttl': 'revoked', longer: 'revoked', shorter: 'revoked', grandchild: 'revoked', 'root-issued': 'active' });
});
