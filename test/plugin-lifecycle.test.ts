import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, apply, dryRun, publishRaw } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { runCli } from './helpers/cli.js';
import { BOUNDED } from './helpers/wait.js';

test('disabling a step makes the next dry-run name the routes using it; enabling clears it', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY, { id: 'reader', scopes: ['plugin:read'] }] });
  const token = gw.tokens.root!;
  const admin = (method: string, path: string) => request(`${gw.adminUrl}/api/v1/default${path}`, { method, token });
  await apply(gw, [
    ['route', 'limited', { directResponse: { statusCode: 200, body: 'ok' }, pathPrefix: '/l' }],
    ['orch', 'chain', { nodes: [{ id: 'n', step: 'request-id', settings: {} }], links: [] }],
  ]);

  const list = await admin('GET', '/plugin/list');
  assert.equal(list.status, 200);
  const rid = list.json.items.find((i: { code: string }) => i.code === 'request-id');
  assert.equal(rid.enabled, true);
  assert.equal(rid.settingsSchema.type, 'object');

  const off = await admin('POST', '/plugin/disable/request-id');
  assert.equal(off.status, 200);
  assert.equal((await admin('GET', '/plugin/list')).json.items.find((i: { code: string }) => i.code === 'request-id').enabled, false);
  const d = await dryRun(gw);
  assert.equal(d.status, 422);
  assert.deepEqual(
    d.json.issues.map((i) => [i.kind, i.name, i.pointer, i.code]),
    [['orch', 'chain', '/nodes/0/step', 'Compile.Step.Disabled']],
  );
  assert.equal((await publishRaw(gw)).status, 422);
  assert.equal((await request(`${gw.dataUrl}/l`)).text, 'ok', 'the published generation keeps serving');

  assert.equal((await admin('POST', '/plugin/enable/request-id')).status, 200);
  assert.equal((await dryRun(gw)).status, 200);

  assert.equal((await admin('POST', '/plugin/disable/no-such-step')).json.code, 'Svc.Plugin.NotFound');
  const refused = await request(`${gw.adminUrl}/api/v1/default/plugin/disable/cors`, { method: 'POST', token: gw.tokens.reader });
  assert.equal(refused.status, 403);
  assert.equal(refused.json.requiredScope, 'plugin:write');

  const cli = await runCli(['plugin', 'disable', 'cors', '--admin', gw.adminUrl, '--token', token]);
  assert.equal(cli.code, 0);
  assert.equal(cli.json.enabled, false);
});
