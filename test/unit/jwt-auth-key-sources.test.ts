import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile } from '../../src/compiler/compile.js';
import type { DraftRow } from '../../src/contracts/entities.js';

const cluster: DraftRow = { kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } };
const route = (name: string, settings: Record<string, unknown>): DraftRow => ({ kind: 'route', name, doc: { cluster: 'c', pathPrefix: `/${name}`, steps: [{ code: 'jwt-auth', settings }] } });
// HOME: a variable every test process has, allowed for the secretEnv of the HS256 route.
const run = (drafts: DraftRow[]) => compile({ tenant: 'default', published: [], drafts, secrets: { env: { default: ['HOME'] }, reserved: [] } });

test('the generation lists the key sources its jwt-auth steps fetch: one per tenant and URL, the strictest bounds', () => {
  const r = run([
    cluster,
    route('a', { algorithms: ['RS256'], issuer: 'https://id.example.com', minRefreshSeconds: 10 }),
    route('b', { algorithms: ['ES256'], issuer: 'https://id.example.com', maxStaleSeconds: 60 }),
    route('c', { algorithms: ['RS256'], jwksUri: 'https://keys.example.com/jwks.json', issuer: 'https://id.example.com' }),
    route('d', { algorithms: ['HS256'], secretEnv: 'HOME', issuer: 'not-a-url' }),
  ]);
  assert.equal(r.ok, true, JSON.stringify(r.issues));
  if (!r.ok) return;
  assert.deepEqual(r.generation.keySources, [
    { id: 'default issuer https://id.example.com', tenant: 'default', kind: 'issuer', url: 'https://id.example.com', minRefreshSeconds: 10, maxStaleSeconds: 60 },
    { id: 'default jwks https://keys.example.com/jwks.json', tenant: 'default', kind: 'jwks', url: 'https://keys.example.com/jwks.json', minRefreshSeconds: 30, maxStaleSeconds: 21_600 },
  ]);
  const none = run([cluster, route('d', { algorithms: ['HS256'], secretEnv: 'HOME', issuer: 'idp' })]);
  assert.equal(none.ok, true);
  if (none.ok) assert.equal(none.generation.keySources, undefined, 'HS256 with an issuer claim fetches nothing');
});

test('jwt-auth settings: discovery needs an http(s) issuer, jwks and jwksUri exclude each other, public-key algorithms need keys', () => {
  const issues = (settings: Record<string, unknown>) => run([cluster, route('r', settings)]).issues.map((i) => `${i.code} ${i.pointer}`);
  assert.deepEqual(issues({ algorithms: ['RS256'], issuer: 'idp' }), ['Compile.Step.Settings /steps/0/settings']);
  assert.deepEqual(issues({ algorithms: ['RS256'], issuer: 'https://user:pw@id.example.com' }), ['Compile.Step.Settings /steps/0/settings']);
  assert.deepEqual(issues({ algorithms: ['PS256'] }), ['Compile.Step.Settings /steps/0/settings']);
  assert.deepEqual(issues({ algorithms: ['EdDSA'], jwksUri: 'ftp://keys.example.com/' }), ['Compile.Step.Settings /steps/0/settings/jwksUri']);
  assert.deepEqual(issues({ algorithms: ['RS256'], jwksUri: 'https://k.example.com/', jwks: { keys: [{ kty: 'RSA' }] } }), ['Compile.Step.Settings /steps/0/settings']);
  assert.deepEqual(issues({ algorithms: ['EdDSA', 'PS256'], jwksUri: 'https://k.example.com/', audience: ['a', 'b'] }), []);
});
