import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile } from '../../src/compiler/compile.js';
import { mayName } from '../../src/compiler/secret-policy.js';
import type { SecretPolicy } from '../../src/contracts/secrets.js';
import type { DraftRow } from '../../src/contracts/entities.js';

const POLICY: SecretPolicy = { env: { default: ['*'], acme: ['ACME_JWT', 'ADMIN_TOKEN', 'ACME_UNSET'] }, reserved: ['ADMIN_TOKEN'] };

test('mayName: listed names, `*` for the default tenant only, never a reserved (tokenEnv) name', () => {
  assert.equal(mayName(POLICY, 'acme', 'ACME_JWT'), true);
  assert.equal(mayName(POLICY, 'acme', 'PATH'), false, 'unlisted');
  assert.equal(mayName(POLICY, 'acme', 'ADMIN_TOKEN'), false, 'reserved although listed');
  assert.equal(mayName(POLICY, 'default', 'PATH'), true, '* in the default tenant');
  assert.equal(mayName(POLICY, 'default', 'ADMIN_TOKEN'), false, '* never reaches a tokenEnv');
  assert.equal(mayName({ env: { acme: ['*'] }, reserved: [] }, 'acme', 'PATH'), false, '* means nothing outside the default tenant');
  assert.equal(mayName(POLICY, 'globex', 'ACME_JWT'), false, 'a tenant not listed may name nothing');
  assert.equal(mayName(POLICY, 'constructor', 'ACME_JWT'), false);
});

const jwtRoute = (secretEnv: string): DraftRow[] => [
  { kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } },
  { kind: 'route', name: 'r', doc: { cluster: 'c', hosts: ['a.example'], steps: [{ code: 'jwt-auth', settings: { algorithms: ['HS256'], secretEnv } }] } },
];
const issuesOf = (tenant: string, secretEnv: string, secrets: SecretPolicy | undefined = POLICY) =>
  compile({ tenant, published: [], drafts: jwtRoute(secretEnv), secrets }).issues;

test('the compiler refuses a secretEnv the tenant may not name with one message, whether the variable exists or not', () => {
  process.env.SY_UNIT_EXISTS = 'x'.repeat(40);
  delete process.env.SY_UNIT_MISSING;
  process.env.ADMIN_TOKEN = 'y'.repeat(40);
  try {
    const exists = issuesOf('acme', 'SY_UNIT_EXISTS');
    const missing = issuesOf('acme', 'SY_UNIT_MISSING');
    const token = issuesOf('acme', 'ADMIN_TOKEN');
    assert.deepEqual(exists, [
      { kind: 'route', name: 'r', pointer: '/steps/0/settings/secretEnv', code: 'Compile.Step.SecretNotAllowed', message: 'jwt-auth: this environment variable is not allowed for tenant acme (worker.json secrets.env lists the ones it may name)' },
    ]);
    assert.deepEqual(missing, exists, 'byte-identical: existing or not');
    assert.deepEqual(token, exists, "an admin key's tokenEnv, listed or not");
    assert.deepEqual(issuesOf('default', 'ADMIN_TOKEN').map((i) => i.code), ['Compile.Step.SecretNotAllowed']);
    assert.deepEqual(issuesOf('acme', 'SY_UNIT_EXISTS', undefined), exists, 'no policy given: nothing may be named');
    // Allowed names build as before: an unset one says so.
    assert.deepEqual(issuesOf('default', 'SY_UNIT_EXISTS'), []);
    const unset = issuesOf('acme', 'ACME_UNSET');
    assert.deepEqual(unset.map((i) => i.code), ['Compile.Step.Settings']);
    assert.match(unset[0]!.message, /ACME_UNSET \(secretEnv\) is not set/);
  } finally {
    delete process.env.SY_UNIT_EXISTS;
    delete process.env.ADMIN_TOKEN;
  }
});

test('another tenant’s published jwt-auth is not re-judged by the policy when a tenant publishes', () => {
  process.env.SY_UNIT_OTHER = 'z'.repeat(40);
  try {
    const [c, r] = jwtRoute('SY_UNIT_OTHER');
    const published = [{ tenant: 'globex', ...c! }, { tenant: 'globex', ...r! }] as never;
    const out = compile({ tenant: 'acme', published, drafts: [], secrets: POLICY });
    assert.deepEqual(out.issues, []);
  } finally {
    delete process.env.SY_UNIT_OTHER;
  }
});
