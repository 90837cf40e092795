import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { runCli } from './helpers/cli.js';
import { BOUNDED } from './helpers/wait.js';

/** The admin contract's scope families, and their bits: 1 read, 2 write, 4 lifecycle (granted with write). */
const FAMILIES = ['sys', 'cluster', 'metrics', 'config', 'publish', 'key', 'plugin', 'audit'];
const masks = (granted: Record<string, number>) => Object.fromEntries(FAMILIES.map((f) => [f, granted[f] ?? 0]));

const CASES = [
  {
    id: 'star',
    key: { scopes: ['*'] },
    expect: { kind: 'system', tenant: null, masks: masks(Object.fromEntries(FAMILIES.map((f) => [f, 7]))), scopes: ['*'] },
  },
  {
    id: 'reader',
    key: { scopes: ['config:read', 'publish:read'] },
    expect: { kind: 'system', tenant: null, masks: masks({ config: 1, publish: 1 }), scopes: ['config:read', 'publish:read'] },
  },
  {
    id: 'acme-ops',
    key: { scopes: ['config:write', 'publish:read', 'key:*', 'plugin:read', 'plugin:write'], tenant: 'acme' },
    expect: {
      kind: 'tenant',
      tenant: 'acme',
      masks: masks({ config: 6, publish: 1, key: 7, plugin: 7 }),
      scopes: ['config:write', 'publish:read', 'key:*', 'plugin:read', 'plugin:write'],
    },
  },
  {
    // the same identity however its token is configured
    id: 'hashed',
    key: { scopes: ['sys:read', 'cluster:read'], source: 'tokenSha256' as const },
    expect: { kind: 'system', tenant: null, masks: masks({ sys: 1, cluster: 1 }), scopes: ['sys:read', 'cluster:read'] },
  },
  {
    id: 'plain',
    key: { scopes: ['audit:read'], source: 'token' as const },
    expect: { kind: 'system', tenant: null, masks: masks({ audit: 1 }), scopes: ['audit:read'] },
  },
];

test('whoami returns kind, tenant, masks and scopes for each kind of key', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: CASES.map((c) => ({ id: c.id, ...c.key })) });
  for (const c of CASES) {
    await t.test(`key ${c.id} (${c.key.scopes.join(' ')}${'tenant' in c.key ? `, tenant ${c.key.tenant}` : ''})`, async () => {
      const r = await request(`${gw.adminUrl}/api/v1/sys/whoami`, { token: gw.tokens[c.id] });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, c.expect);
      assert.ok(!r.text.includes(gw.tokens[c.id]!), 'the token is never echoed');
    });
  }

  await t.test('the CLI prints the same body and exits 0, with flags or with SWITCHYARD_* variables', async () => {
    for (const c of CASES.slice(0, 3)) {
      const byFlags = await runCli(['whoami', '--admin', gw.adminUrl, '--token', gw.tokens[c.id]!]);
      assert.equal(byFlags.code, 0, byFlags.stdout + byFlags.stderr);
      assert.deepEqual(byFlags.json, c.expect);
    }
    const byEnv = await runCli(['whoami'], { env: { SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: gw.tokens['acme-ops'] } });
    assert.equal(byEnv.code, 0, byEnv.stdout + byEnv.stderr);
    assert.deepEqual(byEnv.json, CASES[2]!.expect);
  });

  await t.test('the CLI with an unknown token prints the 401 envelope and exits 2', async () => {
    const r = await runCli(['whoami', '--admin', gw.adminUrl, '--token', 'x'.repeat(40)]);
    assert.equal(r.code, 2, r.stdout);
    assert.equal(r.json.code, 'Svc.Auth.Unauthenticated');
    assert.equal(typeof r.json.traceId, 'string');
  });
});
