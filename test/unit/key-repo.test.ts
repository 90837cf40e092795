import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VOLUME_KINDS, freshVolume, type VolumeKind } from '../helpers/volumes.js';
import { KeyRepo, type KeyRecord } from '../../src/store/key-repo.js';
import { KeyUsage } from '../../src/admin/keys/key-usage.js';

const rec = (id: string, over: Partial<KeyRecord> = {}): KeyRecord => ({
  id, tenant: 'acme', name: id, fingerprint: `fp-${id}`, scopes: ['config:read'], issuer: 'root', createdAt: 1, expiresAt: null, revokedAt: null, ...over,
});

/** A key repo on a fresh volume of `kind` (gone when the test ends), holding these keys of acme. */
function repoWith(t: { after(fn: () => void): void }, kind: VolumeKind, ...ids: string[]): KeyRepo {
  const v = freshVolume(t, kind);
  const keys = new KeyRepo(v.db);
  for (const id of ids) keys.insert(rec(id));
  return keys;
}

for (const kind of VOLUME_KINDS) {
  test(`regression: a use noted just before a delete leaves no orphan usage row [${kind}]`, (t) => {
    const v = freshVolume(t, kind);
    const keys = new KeyRepo(v.db);
    const usage = new KeyUsage(keys, (err) => assert.fail(String(err)));
    keys.insert(rec('key_a'));
    keys.insert(rec('key_b'));
    usage.touch('key_a', 100);
    usage.touch('key_b', 100);
    assert.ok(keys.delete('acme', 'key_a', 100));
    usage.flush();
    const rows = v.db.prepare('SELECT key_id FROM admin_key_usage ORDER BY key_id').all() as { key_id: string }[];
    assert.deepEqual(rows.map((r) => r.key_id), ['key_b']);
  });

  test(`last use only moves forward, and purge removes expired keys with their usage [${kind}]`, (t) => {
    const v = freshVolume(t, kind);
    const keys = new KeyRepo(v.db);
    keys.insert(rec('key_a', { expiresAt: 50 }));
    keys.insert(rec('key_b', { expiresAt: 5000 }));
    keys.recordUse(new Map([['key_a', 40], ['key_b', 200]]));
    keys.recordUse(new Map([['key_b', 150]]));
    assert.equal(keys.lastUsedAt('key_b'), 200);
    assert.equal(keys.purgeExpired(100), 1);
    assert.equal(keys.get('acme', 'key_a'), null);
    assert.equal(keys.lastUsedAt('key_a'), null);
    assert.deepEqual(keys.list('acme').map((k) => [k.id, k.lastUsedAt]), [['key_b', 200]]);
  });

  test(`revoke keeps the first revocation time; get and revoke are scoped to the tenant [${kind}]`, (t) => {
    const keys = repoWith(t, kind, 'key_a');
    assert.equal(keys.revoke('other', 'key_a', 10), null);
    assert.equal(keys.get('other', 'key_a'), null);
    assert.deepEqual(keys.revoke('acme', 'key_a', 10), []);
    assert.deepEqual(keys.revoke('acme', 'key_a', 20), []);
    assert.equal(keys.get('acme', 'key_a')!.revokedAt, 10);
  });

  test(`regression: revoking or deleting a key revokes every key it issued, directly or through others [${kind}]`, (t) => {
    const keys = repoWith(t, kind, 'key_a');
    keys.insert(rec('key_b', { issuer: 'key_a' }));
    keys.insert(rec('key_c', { issuer: 'key_b' }));
    keys.insert(rec('key_d', { issuer: 'key_b' }));
    keys.insert(rec('key_e')); // root's, not key_a's
    keys.revoke('acme', 'key_d', 5); // already revoked: keeps its time
    assert.deepEqual(keys.revoke('acme', 'key_a', 10)!.sort(), ['key_b', 'key_c']);
    assert.deepEqual(['key_b', 'key_c', 'key_d', 'key_e'].map((id) => keys.get('acme', id)!.revokedAt), [10, 10, 5, null]);

    keys.insert(rec('key_f'));
    keys.insert(rec('key_g', { issuer: 'key_f' }));
    assert.ok(keys.delete('acme', 'key_f', 30));
    assert.equal(keys.get('acme', 'key_g')!.revokedAt, 30);
  });

  test(`regression: a delete through another tenant’s path leaves the key’s last use alone [${kind}]`, (t) => {
    const keys = repoWith(t, kind, 'key_a');
    keys.recordUse(new Map([['key_a', 40]]));
    assert.equal(keys.delete('globex', 'key_a', 50), false);
    assert.equal(keys.lastUsedAt('key_a'), 40);
  });

  test(`a key issued by a sub-key is stored only while its issuer is live [${kind}]`, (t) => {
    const keys = repoWith(t, kind, 'key_a');
    assert.equal(keys.insert(rec('key_b', { issuer: 'key_a' })), true);
    keys.revoke('acme', 'key_a', 10);
    assert.equal(keys.insert(rec('key_c', { issuer: 'key_a' })), false, 'its issuer was revoked first');
    assert.equal(keys.get('acme', 'key_c'), null);
    assert.equal(keys.insert(rec('key_d', { issuer: 'root' })), true, 'a system key issues without a row to lock');
  });
}
