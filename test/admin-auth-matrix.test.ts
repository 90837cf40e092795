/**
 * The auth matrix over the whole admin contract. The operations come from the running
 * gateway's GET /api/v1/openapi.json (generated from the contract table), so every
 * operation added later is covered without touching this file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FAMILIES } from '../src/contracts/scopes.js';
import { newToken, startGateway, type Gateway, type KeySpec } from './helpers/gateway.js';
import { envelopeProblem, request, type HttpResult } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';
import type { Json } from './helpers/json.js';

interface Op {
  method: string;
  path: string;
  operationId: string;
  family: string;
  access: 'read' | 'write' | 'lifecycle';
  auth: 'none' | 'identity' | 'scope';
  level: 'instance' | 'tenant';
  params: string[];
}

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const OWN_TENANT = 'acme';

const allBut = (f: string) => FAMILIES.filter((x) => x !== f).map((x) => `${x}:*`);

const KEYS: KeySpec[] = [
  { id: 'root', scopes: ['*'] },
  { id: 'acme', scopes: ['*'], tenant: OWN_TENANT },
  ...FAMILIES.flatMap((f): KeySpec[] => [
    // every scope but this family's
    { id: `no-${f}`, scopes: allBut(f) },
    // every scope but this family's write
    { id: `ro-${f}`, scopes: [...allBut(f), `${f}:read`] },
    // bound to its tenant, every scope but this family's
    { id: `acme-no-${f}`, scopes: allBut(f), tenant: OWN_TENANT },
  ]),
];

function requiredScope(op: Op): string {
  return `${op.family}:${op.access === 'read' ? 'read' : 'write'}`;
}

function samplePath(op: Op, tenant: string): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === 'tenant' ? tenant : /generation|version|number|count/i.test(name) ? '1' : 'x',
  );
}

function call(gw: Gateway, op: Op, tenant: string, auth: { token?: string; header?: string }): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (auth.header !== undefined) headers.authorization = auth.header;
  return request(`${gw.adminUrl}${samplePath(op, tenant)}`, {
    method: op.method,
    headers,
    token: auth.token,
    body: op.method === 'GET' || op.method === 'HEAD' ? undefined : {},
  });
}

function assertEnvelope(r: HttpResult, what: string): void {
  assert.equal(envelopeProblem(r), null, `${what}: JSON error envelope (${r.status} ${r.text.slice(0, 300)})`);
  assert.equal(r.headers['x-trace-id'], r.json.traceId, `${what}: X-Trace-Id header equals the body's traceId`);
}

function assertError(r: HttpResult, status: number, code: string, what: string): void {
  assert.equal(r.status, status, `${what}: status (body ${r.text.slice(0, 300)})`);
  assertEnvelope(r, what);
  assert.equal(r.json.code, code, `${what}: code`);
}

/** The call got past the auth gate: whatever the handler made of the sample values, it is not an auth refusal. */
function assertPassesAuth(r: HttpResult, what: string): void {
  const code = typeof r.json?.code === 'string' ? r.json.code : '';
  assert.ok(
    r.status !== 401 && !(r.status === 403 && code.startsWith('Svc.Auth.')),
    `${what}: expected to pass the auth gate, got ${r.status} ${r.text.slice(0, 300)}`,
  );
  if (r.status >= 400) assertEnvelope(r, what);
}

function operationsOf(doc: Json): Op[] {
  const ops: Op[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const m of Object.keys(item)) {
      if (!HTTP_METHODS.includes(m)) continue;
      const o = item[m];
      ops.push({
        method: m.toUpperCase(),
        path,
        operationId: o.operationId,
        family: o['x-family'],
        access: o['x-access'],
        auth: o['x-auth'],
        level: o['x-level'],
        params: [...path.matchAll(/\{(\w+)\}/g)].map((x) => x[1]!),
      });
    }
  }
  return ops;
}

/** Tenant sub-keys issued through the API (key.issue), checked like the configured keys. */
async function issueSubKeys(gw: Gateway): Promise<Record<string, string>> {
  const issue = async (name: string, scopes: string[], ttlSeconds?: number) => {
    const r = await request(`${gw.adminUrl}/api/v1/${OWN_TENANT}/key/issue`, {
      method: 'POST',
      token: gw.tokens.root,
      body: { name, scopes, ...(ttlSeconds ? { ttlSeconds } : {}) },
    });
    assert.equal(r.status, 201, `issue ${name}: ${r.text}`);
    return r.json as { id: string; token: string };
  };
  const out: Record<string, string> = {};
  out['sub-acme'] = (await issue('sub-acme', ['*'])).token;
  for (const f of FAMILIES) out[`sub-acme-no-${f}`] = (await issue(`no-${f}`, allBut(f))).token;
  const revoked = await issue('revoked', ['*']);
  const r = await request(`${gw.adminUrl}/api/v1/${OWN_TENANT}/key/revoke/${revoked.id}`, { method: 'POST', token: gw.tokens.root, body: {} });
  assert.equal(r.status, 200, r.text);
  out['sub-revoked'] = revoked.token;
  out['sub-expired'] = (await issue('expired', ['*'], 1)).token;
  await new Promise((res) => setTimeout(res, 1100)); // past its ttl
  return out;
}

test('every operation of the admin contract enforces authentication, scopes and tenant binding', BOUNDED, async (t) => {
  const gw = await startGateway(t, {
    keys: KEYS,
    workers: 1,
    // this test presents hundreds of bad tokens from one address on purpose
    edit: (c) => void (c.admin.authFailures = { burst: 1_000_000, perSecond: 1_000_000 }),
  });
  const subKeys = await issueSubKeys(gw);
  const tok = (id: string) => gw.tokens[id] ?? subKeys[id]!;

  const docRes = await request(`${gw.adminUrl}/api/v1/openapi.json`, { token: tok('root') });
  assert.equal(docRes.status, 200, docRes.text);
  const doc = docRes.json;
  assert.equal(doc.openapi, '3.1.0');
  const ops = operationsOf(doc);

  await t.test('the OpenAPI document describes each operation with family, access, auth and level', () => {
    const ids = new Set<string>();
    for (const op of ops) {
      const what = `${op.method} ${op.path}`;
      assert.ok(typeof op.operationId === 'string' && !ids.has(op.operationId), `${what}: unique operationId`);
      ids.add(op.operationId);
      assert.ok((FAMILIES as readonly string[]).includes(op.family), `${what}: x-family ${op.family}`);
      assert.ok(['read', 'write', 'lifecycle'].includes(op.access), `${what}: x-access ${op.access}`);
      assert.ok(['none', 'identity', 'scope'].includes(op.auth), `${what}: x-auth ${op.auth}`);
      assert.ok(['instance', 'tenant'].includes(op.level), `${what}: x-level ${op.level}`);
      if (op.level === 'tenant') assert.match(op.path, /^\/api\/v1\/\{tenant\}\//, `${what}: tenant-level paths start with /api/v1/{tenant}/`);
      else assert.ok(!op.params.includes('tenant'), `${what}: instance-level paths carry no {tenant}`);
      const declared = (doc.paths[op.path][op.method.toLowerCase()].parameters ?? []).map((p: Json) => p.name).sort();
      assert.deepEqual(declared, [...op.params].sort(), `${what}: every path parameter is declared`);
    }
    // Regression: every operation was documented as 200 application/json.
    const answers = (path: string, method: string) => Object.keys(doc.paths[path][method].responses);
    assert.deepEqual(answers('/api/v1/{tenant}/key/issue', 'post'), ['201', 'default']);
    assert.deepEqual(Object.keys(doc.paths['/metrics'].get.responses['200'].content), ['text/plain']);
    // The operations of this issue are in the table, with the access the admin contract gives them.
    const find = (method: string, path: string) => ops.find((o) => o.method === method && o.path === path);
    assert.deepEqual(
      (({ auth, level }) => ({ auth, level }))(find('GET', '/healthz')!),
      { auth: 'none', level: 'instance' },
    );
    assert.equal(find('GET', '/api/v1/sys/whoami')?.auth, 'identity');
    assert.equal(find('GET', '/api/v1/openapi.json')?.auth, 'identity');
    const status = find('GET', '/api/v1/sys/cluster/status');
    assert.deepEqual(
      status && { family: status.family, access: status.access, auth: status.auth, level: status.level },
      { family: 'cluster', access: 'read', auth: 'scope', level: 'instance' },
    );
  });

  for (const op of ops) {
    const name = `${op.method} ${op.path} [${op.family}:${op.access}, auth ${op.auth}, ${op.level}]`;
    await t.test(name, async (t) => {
      if (op.auth === 'none') {
        const r = await call(gw, op, 'default', {});
        assertPassesAuth(r, 'no token on an unauthenticated operation');
        // This gateway has no admin.oidc: console sign-in answers that it is off (test/console-oidc.test.ts has it on).
        if (op.path.startsWith('/api/v1/sys/oidc/')) return assertError(r, 404, 'Svc.Auth.OidcOff', 'sign-in without admin.oidc');
        assert.ok(r.status < 400, `no token: ${r.status} ${r.text}`);
        return;
      }

      await t.test('no token: 401 Svc.Auth.Unauthenticated', async () => {
        const r = await call(gw, op, 'default', {});
        assertError(r, 401, 'Svc.Auth.Unauthenticated', 'no token');
        // Regression: 401s carried no challenge (RFC 9110 §15.5.2 requires one).
        assert.equal(r.headers['www-authenticate'], 'Bearer realm="switchyard"');
      });
      await t.test('not a bearer token: 401 Svc.Auth.Unauthenticated', async () => {
        const basic = `Basic ${Buffer.from(`root:${tok('root')}`).toString('base64')}`;
        assertError(await call(gw, op, 'default', { header: basic }), 401, 'Svc.Auth.Unauthenticated', 'Basic auth');
        assertError(await call(gw, op, 'default', { header: 'Bearer ' }), 401, 'Svc.Auth.Unauthenticated', 'empty bearer');
      });
      await t.test('unknown token: 401 Svc.Auth.Unauthenticated', async () => {
        const unknown = await call(gw, op, 'default', { token: newToken() });
        assertError(unknown, 401, 'Svc.Auth.Unauthenticated', 'unknown token');
        assert.equal(unknown.headers['www-authenticate'], 'Bearer realm="switchyard", error="invalid_token"');
        // a valid token with one character changed is just as unknown
        const near = tok('root').slice(0, -1) + (tok('root').endsWith('A') ? 'B' : 'A');
        assertError(await call(gw, op, 'default', { token: near }), 401, 'Svc.Auth.Unauthenticated', 'near-miss token');
      });
      await t.test('revoked and expired tenant sub-keys: 401 Svc.Auth.Unauthenticated', async () => {
        for (const id of ['sub-revoked', 'sub-expired']) {
          for (const tenant of ['default', OWN_TENANT]) {
            assertError(await call(gw, op, tenant, { token: tok(id) }), 401, 'Svc.Auth.Unauthenticated', `${id} on ${tenant}`);
          }
        }
      });
      await t.test('a system key holding every scope passes the gate', async () => {
        assertPassesAuth(await call(gw, op, 'default', { token: tok('root') }), 'root key');
        // Regression: the scheme name was matched case-sensitively (RFC 9110 §11.1: it is not).
        assertPassesAuth(await call(gw, op, 'default', { header: `bearer ${tok('root')}` }), 'root key, lower-case scheme');
      });

      if (op.auth === 'scope') {
        const scope = requiredScope(op);
        await t.test(`a key without ${scope}: 403 Svc.Auth.Scope naming ${scope}`, async () => {
          const denied = op.access === 'read' ? [`no-${op.family}`] : [`no-${op.family}`, `ro-${op.family}`];
          for (const id of denied) {
            const r = await call(gw, op, 'default', { token: tok(id) });
            assertError(r, 403, 'Svc.Auth.Scope', `key ${id}`);
            assert.ok(r.json.message.includes(scope), `key ${id}: the message names ${scope}: ${r.json.message}`);
            assert.equal(r.json.requiredScope, scope, `key ${id}: requiredScope`);
          }
        });
        await t.test(`a key with ${scope} but without other families' scopes passes the gate`, async () => {
          // read: a key holding only this family's read (plus others); write: a key holding this family's *
          const other = FAMILIES.find((f) => f !== op.family)!;
          const id = op.access === 'read' ? `ro-${op.family}` : `no-${other}`;
          assertPassesAuth(await call(gw, op, 'default', { token: tok(id) }), `key ${id}`);
        });
      }

      if (op.level === 'tenant') {
        // `acme…`: system keys bound to the tenant in worker.json; `sub-acme…`: sub-keys issued in it.
        await t.test(`keys bound to ${OWN_TENANT} on tenant default: 403 Svc.Auth.TenantScope`, async () => {
          for (const id of ['acme', 'sub-acme']) {
            assertError(await call(gw, op, 'default', { token: tok(id) }), 403, 'Svc.Auth.TenantScope', `${id} key on default`);
          }
        });
        await t.test(`keys bound to ${OWN_TENANT} on their own tenant pass the gate`, async () => {
          for (const id of ['acme', 'sub-acme']) assertPassesAuth(await call(gw, op, OWN_TENANT, { token: tok(id) }), `${id} key on acme`);
        });
        if (op.auth === 'scope') {
          await t.test(`keys bound to ${OWN_TENANT} without the scope, on their own tenant: 403 Svc.Auth.Scope`, async () => {
            for (const id of [`acme-no-${op.family}`, `sub-acme-no-${op.family}`]) {
              const r = await call(gw, op, OWN_TENANT, { token: tok(id) });
              assertError(r, 403, 'Svc.Auth.Scope', `${id} on acme`);
              assert.equal(r.json.requiredScope, requiredScope(op));
            }
          });
        }
      } else if (op.auth === 'scope') {
        await t.test(`keys bound to ${OWN_TENANT} (scopes *) on an instance-level operation: 403 Svc.Auth.TenantScope`, async () => {
          for (const id of ['acme', 'sub-acme']) assertError(await call(gw, op, 'default', { token: tok(id) }), 403, 'Svc.Auth.TenantScope', `${id} key`);
        });
      } else {
        await t.test(`keys bound to ${OWN_TENANT} may call this identity operation`, async () => {
          for (const id of ['acme', 'sub-acme']) assertPassesAuth(await call(gw, op, 'default', { token: tok(id) }), `${id} key`);
        });
      }
    });
  }
});
