import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { claimsKeeper, keptClaimNames } from '../../src/steps/identity/introspection-claims.js';
import { IntrospectionCache, MAX_CACHE_BYTES, MAX_ENTRY_BYTES, type Introspected } from '../../src/steps/identity/introspection-cache.js';
import { oauthIntrospection } from '../../src/steps/identity/oauth-introspection.js';

const T0 = 1_000_000;
const base = { claims: {}, requiredScopes: [], requiredClaims: {} };
/** An answer as a hostile endpoint sends it: the used claims plus 60 KiB the step never reads. */
const bloated = (extra: Record<string, unknown> = {}): Introspected => ({
  active: true,
  expMs: Infinity,
  claims: { active: true, sub: 'alice', aud: 'api', scope: 'a b', scp: ['a'], exp: 2e9, nbf: 1, client_id: 'app', email: 'a@x', groups: ['g'], junk: 'x'.repeat(60 * 1024), ...extra },
});

test('kept claims: only those the step reads, by its settings', () => {
  assert.deepEqual(keptClaimNames(base).sort(), ['exp', 'nbf', 'sub']);
  const keep = claimsKeeper({ ...base, audience: 'api', requiredScopes: ['a'], claims: { email: 'x-email' }, requiredClaims: { groups: 'g' } });
  const kept = keep(bloated()) as Extract<Introspected, { active: true }>;
  assert.deepEqual(kept.claims, { sub: 'alice', aud: 'api', scope: 'a b', scp: ['a'], exp: 2e9, nbf: 1, email: 'a@x', groups: ['g'] });
  assert.equal(kept.expMs, Infinity);
  const plain = claimsKeeper(base)(bloated()) as Extract<Introspected, { active: true }>;
  assert.deepEqual(plain.claims, { sub: 'alice', exp: 2e9, nbf: 1 }, 'no aud, scope, client_id unless the settings read them');
  const mapped = claimsKeeper({ ...base, claims: { client_id: 'x-client-id' } })(bloated()) as Extract<Introspected, { active: true }>;
  assert.equal(mapped.claims.client_id, 'app', 'client_id kept when mapped');
  assert.deepEqual(claimsKeeper(base)({ active: false }), { active: false });
  // Absent claims stay absent (no `undefined` keys), and inherited names are not read.
  assert.deepEqual((claimsKeeper({ ...base, claims: { toString: 'x-t' } })({ active: true, expMs: 1, claims: { sub: 's' } }) as { claims: object }).claims, { sub: 's' });
});

test('a cache entry is bounded: kept claims over 4 KiB are not cached, the projected 60 KiB answer is', () => {
  const c = new IntrospectionCache({ cacheMs: 60_000, negativeMs: 5_000, maxStaleMs: 60_000, maxEntries: 100 });
  c.put('raw', bloated(), T0);
  assert.equal(c.size, 0, 'a 60 KiB answer kept whole would be refused');
  c.put('kept', claimsKeeper(base)(bloated()), T0);
  assert.equal(c.size, 1);
  assert.ok(c.bytes < 256, `${c.bytes} bytes held`);
  const bigMapped = claimsKeeper({ ...base, claims: { groups: 'x-groups' } })(bloated({ groups: Array.from({ length: 1_000 }, (_, i) => `group-${i}`) }));
  c.put('big', bigMapped, T0);
  assert.equal(c.fresh('big', T0), null, 'a mapped claim over the bound: asked again next time');
  assert.equal(c.stale('big', T0), null);
  const edge = (n: number): Introspected => ({ active: true, expMs: Infinity, claims: { sub: 'x'.repeat(n - JSON.stringify({ sub: '' }).length) } });
  c.put('at', edge(MAX_ENTRY_BYTES), T0);
  c.put('over', edge(MAX_ENTRY_BYTES + 1), T0);
  assert.ok(c.fresh('at', T0), 'exactly 4 KiB is kept');
  assert.equal(c.fresh('over', T0), null, 'one byte more is not');
  // A replaced or expired entry gives its bytes back.
  const before = c.bytes;
  c.put('at', { active: false }, T0);
  assert.ok(c.bytes < before - MAX_ENTRY_BYTES + 1);
});

test('the cache holds at most MAX_CACHE_BYTES whatever maxEntries says (least recently used go first)', () => {
  const c = new IntrospectionCache({ cacheMs: 60_000, negativeMs: 5_000, maxStaleMs: 0, maxEntries: 100_000 });
  const answer: Introspected = { active: true, expMs: Infinity, claims: { sub: 'x'.repeat(4_000) } };
  const n = Math.ceil((MAX_CACHE_BYTES / 4_000) * 1.5);
  for (let i = 0; i < n; i++) c.put(`k${i}`, answer, T0);
  assert.ok(c.bytes <= MAX_CACHE_BYTES, `${c.bytes} bytes`);
  assert.ok(c.size < n && c.size > (MAX_CACHE_BYTES / 4_200) * 0.9, `${c.size} entries`);
  assert.equal(c.fresh('k0', T0), null, 'the oldest went');
  assert.ok(c.fresh(`k${n - 1}`, T0));
});

test('maxEntries is at most 100000', () => {
  const settings = { url: 'https://id.example/introspect', clientId: 'gw', clientSecretEnv: 'S' };
  assert.ok(v.safeParse(oauthIntrospection.schema, { ...settings, maxEntries: 100_000 }).success);
  assert.ok(!v.safeParse(oauthIntrospection.schema, { ...settings, maxEntries: 100_001 }).success);
  assert.ok(!v.safeParse(oauthIntrospection.schema, { ...settings, maxEntries: 1_000_000 }).success);
});
