import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubKeyRing } from '../../src/admin/keys/sub-key-ring.js';
import { KeyUsage } from '../../src/admin/keys/key-usage.js';
import { fingerprint, newSubKey } from '../../src/admin/keys/key-format.js';
import type { KeyRecord, KeyRepo } from '../../src/store/key-repo.js';

/** A KeyRepo stand-in that counts the lookups the ring makes. */
function spyRepo(records: KeyRecord[]) {
  const calls: string[] = [];
  const used = new Map<string, number>();
  const repo = {
    async byFingerprint(fp: string) {
      calls.push(fp);
      return records.find((r) => r.fingerprint === fp) ?? null;
    },
    async recordUse(batch: ReadonlyMap<string, number>) {
      for (const [k, v] of batch) used.set(k, v);
    },
  } as unknown as KeyRepo;
  return { repo, calls, used };
}

function record(token: string, over: Partial<KeyRecord> = {}): KeyRecord {
  return { id: 'key_1', tenant: 'acme', name: 'ci', fingerprint: fingerprint(token), scopes: ['config:read'], issuer: 'root', createdAt: 0, expiresAt: null, revokedAt: null, ...over };
}

test('a sub-key with a wrong checksum is refused without a store lookup', async () => {
  const token = newSubKey();
  const { repo, calls } = spyRepo([record(token)]);
  const ring = new SubKeyRing(repo, new KeyUsage(repo, () => {}), () => 1000);
  const last = token.at(-1) === 'a' ? 'b' : 'a';
  assert.equal(await ring.resolve(token.slice(0, -1) + last), null);
  assert.equal(await ring.resolve(token.slice(0, 20)), null);
  assert.deepEqual(calls, []);
  assert.equal(ring.stats.refusedByChecksum, 2);
});

test('tokens without the prefix are not the ring\'s business: no lookup, no count', async () => {
  const { repo, calls } = spyRepo([]);
  const ring = new SubKeyRing(repo, new KeyUsage(repo, () => {}));
  assert.equal(await ring.resolve('a-system-token-of-forty-characters-xxxxx'), null);
  assert.deepEqual(calls, []);
  assert.equal(ring.stats.refusedByChecksum, 0);
});

test('a valid sub-key resolves to a tenant identity and its use is recorded on flush; revoked and expired keys do not', async () => {
  const token = newSubKey();
  const revoked = newSubKey();
  const expired = newSubKey();
  const { repo, calls, used } = spyRepo([
    record(token),
    record(revoked, { id: 'key_r', revokedAt: 500 }),
    record(expired, { id: 'key_e', expiresAt: 1000 }),
  ]);
  const usage = new KeyUsage(repo, () => {});
  const ring = new SubKeyRing(repo, usage, () => 1000);
  const id = await ring.resolve(token);
  assert.deepEqual(
    id && { id: id.id, kind: id.kind, tenant: id.tenant, scopes: id.scopes, config: id.masks.config, key: id.masks.key },
    { id: 'key_1', kind: 'tenant', tenant: 'acme', scopes: ['config:read'], config: 1, key: 0 },
  );
  assert.equal(await ring.resolve(revoked), null);
  assert.equal(await ring.resolve(expired), null, 'expiresAt is exclusive: expired at 1000');
  assert.equal(calls.length, 3, 'one lookup each');
  assert.equal(used.size, 0, 'nothing written on the request path');
  await usage.flush();
  assert.deepEqual([...used], [['key_1', 1000]]);
});
