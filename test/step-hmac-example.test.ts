import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startGateway } from './helpers/gateway.js';
import { ROOT_KEY, dryRun, publish, publishRaw, setEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { runCli } from './helpers/cli.js';
import { startUpstream } from './helpers/upstream.js';
import { BOUNDED } from './helpers/wait.js';

/**
 * The example package examples/steps/hmac-signature (built by `npm run build`), installed by
 * worker.json `steps.packages` as an operator would: listed with its schema, checked at
 * dry-run, answering signed and unsigned requests on the data port, named by explain, and
 * usable only by the tenants `steps.tenants` lists.
 */

const HMAC = fileURLToPath(new URL('../examples/steps/hmac-signature/', import.meta.url));
const KEY = 'partner-shared-key';

/** The README's recipe: METHOD, PATH?QUERY, TIMESTAMP, hex sha256 of the body, joined by \n. */
function signed(method: string, target: string, body: string, key = KEY, ts = Math.floor(Date.now() / 1000)) {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  const sig = createHmac('sha256', key).update([method, target, String(ts), bodyHash].join('\n')).digest('hex');
  return { 'x-timestamp': String(ts), 'x-signature': sig };
}

test('the hmac-signature example installed by steps.packages: plugin list, 422 with a pointer, 200 and 401 on the data port, explain, steps.tenants', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    env: { SY_T_PARTNER_KEY: KEY },
    edit: (c) => {
      c.steps = { packages: [HMAC], tenants: { 'hmac-signature': ['default', 'acme'] } };
      c.upstreams = { allow: [], deny: [], tenants: { acme: { allow: ['127.0.0.1/32'], deny: [] }, globex: { allow: ['127.0.0.1/32'], deny: [] } } };
      c.secrets = { env: { default: ['SY_T_PARTNER_KEY'], acme: ['SY_T_PARTNER_KEY'], globex: ['SY_T_PARTNER_KEY'] } };
    },
  });
  const token = gw.tokens.root!;

  const list = await runCli(['plugin', 'list', '--json', '--admin', gw.adminUrl, '--token', token], { timeoutMs: 60_000 });
  assert.equal(list.code, 0, list.stderr);
  const items = (Array.isArray(list.json) ? list.json : list.json.items) as { code: string; package?: string; settingsSchema: { properties: Record<string, unknown>; required?: string[] } }[];
  const hmac = items.find((i) => i.code === 'hmac-signature');
  assert.ok(hmac, `plugin list shows the example: ${list.stdout.slice(0, 300)}`);
  assert.equal(hmac.package, 'switchyard-step-hmac-signature');
  assert.deepEqual(hmac.settingsSchema.required, ['secretEnv']);
  assert.ok('maxSkewSeconds' in hmac.settingsSchema.properties);

  await setEntity(gw, 'cluster', 'up', { targets: [up.target] });
  await setEntity(gw, 'route', 'partner', { pathPrefix: '/partner', cluster: 'up', steps: [{ code: 'hmac-signature', settings: { secretEnv: 'SY_T_PARTNER_KEY', maxSkewSeconds: 0 } }] });
  const bad = await dryRun(gw);
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(bad.json.issues.map((i) => [i.code, i.pointer]), [['Compile.Step.Settings', '/steps/0/settings/maxSkewSeconds']]);

  await setEntity(gw, 'route', 'partner', { pathPrefix: '/partner', cluster: 'up', steps: [{ code: 'hmac-signature', settings: { secretEnv: 'SY_T_PARTNER_KEY' } }] });
  await publish(gw);
  const body = '{"item":"tea"}';
  const good = await request(`${gw.dataUrl}/partner/orders?id=7`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signed('POST', '/partner/orders?id=7', body) } });
  assert.equal(good.status, 200, good.text);
  assert.equal(up.requests.at(-1)!.url, '/partner/orders?id=7');
  const otherKey = await request(`${gw.dataUrl}/partner/orders?id=7`, { method: 'POST', body, headers: signed('POST', '/partner/orders?id=7', body, 'not-the-key') });
  assert.equal(otherKey.status, 401, otherKey.text);
  assert.equal(otherKey.json.code, 'Hmac.BadSignature');
  const tampered = await request(`${gw.dataUrl}/partner/orders?id=8`, { method: 'POST', body, headers: signed('POST', '/partner/orders?id=7', body) });
  assert.equal(tampered.json.code, 'Hmac.BadSignature');
  const unsigned = await request(`${gw.dataUrl}/partner/orders`);
  assert.equal(unsigned.status, 401);
  assert.equal(unsigned.json.code, 'Hmac.MissingSignature');
  const replayed = await request(`${gw.dataUrl}/partner/orders`, { headers: signed('GET', '/partner/orders', '', KEY, Math.floor(Date.now() / 1000) - 3600) });
  assert.equal(replayed.json.code, 'Hmac.Expired');

  const e = await request(`${gw.adminUrl}/api/v1/default/explain`, { method: 'POST', token, body: { method: 'GET', url: 'http://gw.test/partner/orders' } });
  assert.equal(e.status, 200, e.text);
  const step = (e.json.route as { terminal: { steps: { code: string; verdict: string; reason: string }[] } }).terminal.steps[0]!;
  assert.deepEqual([step.code, step.verdict], ['hmac-signature', 'at run time']);
  assert.match(step.reason, /switchyard-step-hmac-signature@/);

  // steps.tenants: acme is listed and publishes; globex is not and gets the issue at the step's code.
  const route = { hosts: ['p.example'], pathPrefix: '/', cluster: 'up', steps: [{ code: 'hmac-signature', settings: { secretEnv: 'SY_T_PARTNER_KEY' } }] };
  for (const tenant of ['acme', 'globex']) {
    await setEntity(gw, 'cluster', 'up', { targets: [up.target] }, tenant);
    await setEntity(gw, 'route', 'partner', { ...route, hosts: [`${tenant}.example`] }, tenant);
  }
  const acmePublish = await publishRaw(gw, 'acme');
  assert.equal(acmePublish.status, 200, acmePublish.text);
  const refused = await dryRun(gw, 'globex');
  assert.equal(refused.status, 422, refused.text);
  assert.deepEqual(refused.json.issues.map((i) => [i.code, i.pointer]), [['Compile.Step.NotAllowed', '/steps/0/code']]);
  const acme = await request(`${gw.dataUrl}/orders`, { headers: { host: 'acme.example' } });
  assert.equal(acme.json.code, 'Hmac.MissingSignature', 'acme’s route runs the step');
});
