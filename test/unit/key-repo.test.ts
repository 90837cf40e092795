import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VOLUME_KINDS, freshVolume, type VolumeKind } from '../helpers/volumes.js';
import { KeyRepo, type KeyRecord } from '../../src/store/key-repo.js';
import { KeyUsage } from '../../src/admin/keys/key-usage.js';
import { revoke } from '../../src/admin/handlers/key.js';

const rec = (id: string, over: Partial<KeyRecord> = {}): KeyRecord => ({
  id, tenant: 'acme', name: id, fingerprint: `fp-${id}`, scopes: ['config:read'], issuer: 'root', createdAt: 1, expiresAt: null, revokedAt: null, ...over,
});

/** A key repo on a fresh volume of `kind` (gone when the test ends), holding these keys of acme. */
async function repoWith(t: { after(fn: () => void | Promise<void>): void }, kind: VolumeKind, ...ids: string[]): Promise<KeyRepo> {
  const v = await freshVolume(t, kind);
  const keys = new KeyRepo(v.db);
  for (const id of ids) await keys.insert(rec(id));
  return keys;
}

for (const kind of VOLUME_KINDS) {
  test(`regression: a use noted just before a delete leaves no orphan usage row [${kind}]`, async (t) => {
    const v = await freshVolume(t, kind);
    const keys = new KeyRepo(v.db);
    const usage = new KeyUsage(keys, (err) => assert.fail(String(err)));
    await keys.insert(rec('key_a'));
    await keys.insert(rec('key_b'));
    usage.touch('key_a', 100);
    usage.touch('key_b', 100);
    assert.ok(await keys.delete('acme', 'key_a', 100));
    await usage.flush();
    const rows = (await v.db.prepare('SELECT key_id FROM admin_key_usage ORDER BY key_id').all()) as { key_id: string }[];
    assert.deepEqual(rows.map((r) => r.key_id), ['key_b']);
  });

  test(`last use only moves forward, and purge removes expired keys with their usage [${kind}]`, async (t) => {
    const v = await freshVolume(t, kind);
    const keys = new KeyRepo(v.db);
    await keys.insert(rec('key_a', { expiresAt: 50 }));
    await keys.insert(rec('key_b', { expiresAt: 5000 }));
    await keys.recordUse(new Map([['key_a', 40], ['key_b', 200]]));
    await keys.recordUse(new Map([['key_b', 150]]));
    assert.equal(await keys.lastUsedAt('key_b'), 200);
    assert.equal(await keys.purgeExpired(100), 1);
    assert.equal(await keys.get('acme', 'key_a'), null);
    assert.equal(await keys.lastUsedAt('key_a'), null);
    assert.deepEqual((await keys.list('acme')).map((k) => [k.id, k.lastUsedAt]), [['key_b', 200]]);
  });

  test(`revoke keeps the first revocation time; get and revoke are scoped to the tenant [${kind}]`, async (t) => {
    const keys = await repoWith(t, kind, 'key_a');
    assert.equal(await keys.revoke('other', 'key_a', 10), null);
    assert.equal(await keys.get('other', 'key_a'), null);
    assert.deepEqual(await keys.revoke('acme', 'key_a', 10), []);
    assert.deepEqual(await keys.revoke('acme', 'key_a', 20), []);
    assert.equal((await keys.get('acme', 'key_a'))!.revokedAt, 10);
  });

  test(`regression: revoking or deleting a key revokes every key it issued, directly or through others [${kind}]`, async (t) => {
    const keys = await repoWith(t, kind, 'key_a');
    await keys.insert(rec('key_b', { issuer: 'key_a' }));
    await keys.insert(rec('key_c', { issuer: 'key_b' }));
    await keys.insert(rec('key_d', { issuer: 'key_b' }));
    await keys.insert(rec('key_e')); // root's, not key_a's
    await keys.revoke('acme', 'key_d', 5); // already revoked: keeps its time
    assert.deepEqual((await keys.revoke('acme', 'key_a', 10))!.sort(), ['key_b', 'key_c']);
    const revokedAt = async (id: string) => (await keys.get('acme', id))!.revokedAt;
    assert.deepEqual(await Promise.all(['key_b', 'key_c', 'key_d', 'key_e'].map(revokedAt)), [10, 10, 5, null]);

    await keys.insert(rec('key_f'));
    await keys.insert(rec('key_g', { issuer: 'key_f' }));
    assert.ok(await keys.delete('acme', 'key_f', 30));
    assert.equal((await keys.get('acme', 'key_g'))!.revokedAt, 30);
  });

  test(`regression: a delete through another tenant’s path leaves the key’s last use alone [${kind}]`, async (t) => {
    const keys = await repoWith(t, kind, 'key_a');
    await keys.recordUse(new Map([['key_a', 40]]));
    assert.equal(await keys.delete('globex', 'key_a', 50), false);
    assert.equal(await keys.lastUsedAt('key_a'), 40);
  });

  test(`a key issued by a sub-key is stored only while its issuer is live [${kind}]`, async (t) => {
    const keys = await repoWith(t, kind, 'key_a');
    assert.equal(await keys.insert(rec('key_b', { issuer: 'key_a' })), true);
    await keys.revoke('acme', 'key_a', 10);
    assert.equal(await keys.insert(rec('key_c', { issuer: 'key_a' })), false, 'its issuer was revoked first');
    assert.equal(await keys.get('acme', 'key_c'), null);
    assert.equal(await keys.insert(rec('key_d', { issuer: 'root' })), true, 'a system key issues without a row to lock');
  });
}

for (const kind of ['memory', 'postgres'] as const) {
  test(`regression: a revoke answered 404 inside its write's transaction keeps every key's pending use [${kind}]`, async (t) => {
    const v = await freshVolume(t, kind);
    const keys = new KeyRepo(v.db);
    const keyUsage = new KeyUsage(keys, (err) => assert.fail(String(err)));
    await keys.insert({ id: 'key_a', tenant: 'acme', name: 'a', fingerprint: 'fp-a', scopes: ['config:read'], issuer: 'root', createdAt: 1, expiresAt: null, revokedAt: null });
    keyUsage.touch('key_a', 12345); // used for another call a moment ago
    const services = { keyUsage, keys } as never;
    // As the admin edge runs an audited write: the handler inside the volume's transaction.
    await assert.rejects(v.db.transaction(async () => revoke({ params: { tenant: 'acme', id: 'key_nope' }, services } as never)), /key_nope/);
    await keyUsage.flush();
    assert.equal(await keys.lastUsedAt('key_a'), 12345, 'the use noted before the failed revoke is stored');
  });
}
