import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstMatch, mappedClaims, sessionIdentity } from '../../src/admin/oidc/claim-mapping.js';
import { masksOf } from '../../src/admin/scopes.js';
import type { OidcMappingConfig } from '../../src/shared/gateway-config-oidc.js';

const MAPPINGS: OidcMappingConfig[] = [
  { claim: 'groups', value: 'ops', scopes: ['*'], tenant: null },
  { claim: 'groups', value: 'acme-devs', scopes: ['config:read'], tenant: 'acme' },
  { claim: 'email', value: 'auditor@example.test', scopes: ['audit:read'], tenant: 'acme' },
];

test('a list claim must contain the value, a string claim must equal it; the first matching mapping decides alone', () => {
  assert.equal(firstMatch(MAPPINGS, { groups: ['acme-devs'] }), MAPPINGS[1]);
  assert.equal(firstMatch(MAPPINGS, { groups: ['acme-devs', 'ops'] }), MAPPINGS[0], 'list order, not claim order');
  assert.equal(firstMatch(MAPPINGS, { groups: 'ops' }), MAPPINGS[0]);
  assert.equal(firstMatch(MAPPINGS, { groups: 'ops-team' }), null, 'no substring match');
  assert.equal(firstMatch(MAPPINGS, { groups: [], email: 'auditor@example.test', email_verified: true }), MAPPINGS[2]);
  assert.equal(firstMatch(MAPPINGS, { groups: ['sales'], email: 'carol@example.test' }), null);
  assert.equal(firstMatch(MAPPINGS, { groups: { ops: true } }), null, 'an object claim holds nothing');
  assert.deepEqual(mappedClaims(MAPPINGS), ['groups', 'email', 'email_verified'], 'an email mapping reads email_verified too');
  assert.deepEqual(mappedClaims(MAPPINGS.slice(0, 2)), ['groups']);
});

// Regression: a mapping on email granted scopes to an address the provider had not verified.
test('a mapping on email matches only when email_verified is true', () => {
  const auditor = { groups: [], email: 'auditor@example.test' };
  assert.equal(firstMatch(MAPPINGS, auditor), null, 'no email_verified');
  assert.equal(firstMatch(MAPPINGS, { ...auditor, email_verified: false }), null);
  assert.equal(firstMatch(MAPPINGS, { ...auditor, email_verified: 'true' }), null, 'the boolean true only');
  assert.equal(firstMatch(MAPPINGS, { ...auditor, email_verified: true }), MAPPINGS[2]);
  assert.equal(firstMatch(MAPPINGS, { groups: ['ops'], email_verified: false }), MAPPINGS[0], 'other claims need no verification');
});

test('the session identity: oidc:<sub>, kind and tenant from the mapping, its scopes as masks, the expiry', () => {
  const bob = sessionIdentity('bob', 'bob@example.test', MAPPINGS[1]!, 123);
  assert.deepEqual(bob, { id: 'oidc:bob', kind: 'tenant', tenant: 'acme', scopes: ['config:read'], masks: masksOf(['config:read']), expiresAt: 123, session: { name: 'bob@example.test' } });
  const alice = sessionIdentity('alice', null, MAPPINGS[0]!, 456);
  assert.equal(alice.kind, 'system');
  assert.equal(alice.tenant, null);
  assert.equal(alice.session?.name, 'alice', 'no email: the subject');
});
