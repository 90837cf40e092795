import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, dryRun, setEntity, type CompileIssue } from './helpers/admin.js';
import { BOUNDED } from './helpers/wait.js';

/**
 * A tenant's jwt-auth may name only the environment variables worker.json `secrets.env`
 * lists for it (the default tenant's `*`: any but an admin key's tokenEnv). A dry-run
 * cannot tell whether an unlisted variable exists: the refusal is the same either way.
 */

const jwt = (secretEnv: string) => ({ directResponse: { statusCode: 200, body: 'in' }, hosts: ['a.example'], steps: [{ code: 'jwt-auth', settings: { algorithms: ['HS256'], secretEnv } }] });

test('secretEnv: unlisted names get one refusal whether set or not, a tokenEnv is refused even if listed, the default tenant’s * works', BOUNDED, async (t) => {
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    env: { SY_T_SET_ELSEWHERE: 'e'.repeat(40), SY_T_ACME: 'a'.repeat(40), SY_T_NOWHERE: undefined, SY_T_ACME_UNSET: undefined },
    // ROOT_KEY's token is read from SY_TEST_TOKEN_0 (tokenEnv).
    edit: (c) => (c.secrets = { env: { default: ['*'], acme: ['SY_T_ACME', 'SY_T_ACME_UNSET', 'SY_TEST_TOKEN_0'] } }),
  });
  assert.equal(gw.config.admin.keys[0].tokenEnv, 'SY_TEST_TOKEN_0');

  /** The issues a dry-run of `tenant` reports for one jwt-auth route naming `name`. */
  const issuesFor = async (tenant: string, name: string): Promise<CompileIssue[]> => {
    await setEntity(gw, 'route', 'jwt', jwt(name), tenant);
    const r = await dryRun(gw, tenant);
    assert.ok(r.status === 200 || r.status === 422, r.text);
    return r.json.issues;
  };

  const setElsewhere = await issuesFor('acme', 'SY_T_SET_ELSEWHERE');
  const nowhere = await issuesFor('acme', 'SY_T_NOWHERE');
  assert.deepEqual(setElsewhere.map((i) => [i.code, i.pointer]), [['Compile.Step.SecretNotAllowed', '/steps/0/settings/secretEnv']]);
  assert.match(setElsewhere[0]!.message, /not allowed for tenant acme/);
  assert.equal(JSON.stringify(nowhere), JSON.stringify(setElsewhere), 'byte-identical refusal, set or not');
  assert.equal(JSON.stringify(await issuesFor('acme', 'SY_TEST_TOKEN_0')), JSON.stringify(setElsewhere), "an admin key's tokenEnv: refused although listed");
  assert.equal(JSON.stringify(await issuesFor('globex', 'SY_T_SET_ELSEWHERE')), JSON.stringify(setElsewhere).replaceAll('acme', 'globex'), 'a tenant not listed names nothing');
  assert.deepEqual(await issuesFor('acme', 'SY_T_ACME'), [], 'a listed variable that is set');
  const unset = await issuesFor('acme', 'SY_T_ACME_UNSET');
  assert.deepEqual(unset.map((i) => i.code), ['Compile.Step.Settings'], 'listed but unset: said so, as before');
  assert.match(unset[0]!.message, /SY_T_ACME_UNSET \(secretEnv\) is not set/);

  // The default tenant's `*`: any variable, but never a tokenEnv.
  assert.deepEqual(await issuesFor('default', 'SY_T_SET_ELSEWHERE'), []);
  assert.deepEqual((await issuesFor('default', 'SY_TEST_TOKEN_0')).map((i) => i.code), ['Compile.Step.SecretNotAllowed']);
  assert.deepEqual((await issuesFor('default', 'SY_T_NOWHERE')).map((i) => i.code), ['Compile.Step.Settings'], 'under *, an unset variable is said unset as before');
});
