import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newToken, startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY } from './helpers/admin.js';
import { envelopeProblem, request, type HttpResult } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

/**
 * The audit trail: every authenticated admin write (a POST the contract does not label
 * read) is recorded, refused or not, with who, where, what, the status and the traceId
 * of the call; 401s and reads (dry-run included) are not. Read back with audit/list,
 * newest first, a page at a time, each tenant-bound key seeing its own tenant only.
 */

interface Entry {
  identity: { id: string; kind: 'system' | 'tenant' };
  tenant: string;
  operation: string;
  target: string | null;
  status: number;
  traceId: string;
  generation: number | null;
}

interface ListBody {
  tenant: string;
  items: (Entry & { id: number; at: string })[];
  next: number | null;
}

const ACME_SCOPES = ['config:*', 'publish:*', 'plugin:*', 'key:*', 'audit:read'];

class Session {
  /** tenant -> the writes expected in its trail, oldest first */
  readonly expected = new Map<string, Entry[]>();

  constructor(readonly gw: Gateway) {}

  call(token: string, method: 'GET' | 'POST', tenant: string, rest: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult> {
    return request(`${this.gw.adminUrl}/api/v1/${tenant}/${rest}`, { method, token, body, headers, timeoutMs: 20_000 });
  }

  /** Makes a write and remembers the entry it must leave (status and traceId from the answer). */
  async write(
    who: { id: string; kind: 'system' | 'tenant'; token: string },
    tenant: string,
    rest: string,
    expect: { operation: string; target: string | null; status: number; generation?: (r: HttpResult) => number | null },
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<HttpResult> {
    const r = await this.call(who.token, 'POST', tenant, rest, body, headers);
    assert.equal(r.status, expect.status, `${expect.operation} ${rest}: ${r.text}`);
    const traceId = r.headers['x-trace-id'];
    assert.ok(typeof traceId === 'string' && traceId.length > 0, 'every answer carries X-Trace-Id');
    const list = this.expected.get(tenant) ?? [];
    list.push({
      identity: { id: who.id, kind: who.kind },
      tenant,
      operation: expect.operation,
      target: expect.target,
      status: r.status,
      traceId,
      generation: expect.generation ? expect.generation(r) : null,
    });
    this.expected.set(tenant, list);
    return r;
  }

  /** The expected trail of a tenant as audit/list must show it: newest first. */
  newestFirst(tenant: string): Entry[] {
    return [...(this.expected.get(tenant) ?? [])].reverse();
  }
}

const strip = (items: ListBody['items']): Entry[] =>
  items.map(({ identity, tenant, operation, target, status, traceId, generation }) => ({ identity, tenant, operation, target, status, traceId, generation }));

/**
 * deepEqual by JSON, failing with both sides printed one entry a line: assert's own diff
 * of two long arrays of objects can take minutes to compute.
 */
function sameEntries(actual: unknown[], expected: unknown[], what: string): void {
  const a = actual.map((x) => JSON.stringify(x));
  const e = expected.map((x) => JSON.stringify(x));
  if (a.length === e.length && a.every((x, i) => x === e[i])) return;
  const firstDiff = a.findIndex((x, i) => x !== e[i]);
  assert.fail(`${what}: differ at index ${firstDiff === -1 ? a.length : firstDiff}\nactual (${a.length}):\n${a.join('\n')}\nexpected (${e.length}):\n${e.join('\n')}`);
}

async function auditList(gw: Gateway, token: string, tenant: string, query = ''): Promise<HttpResult & { json: ListBody }> {
  return (await request(`${gw.adminUrl}/api/v1/${tenant}/audit/list${query}`, { token })) as HttpResult & { json: ListBody };
}

async function mustList(gw: Gateway, token: string, tenant: string, query = ''): Promise<ListBody> {
  const r = await auditList(gw, token, tenant, query);
  assert.equal(r.status, 200, `audit list ${tenant}${query}: ${r.text}`);
  return r.json;
}

test('the audit trail records every admin write of a scripted two-tenant session, refused ones included', BOUNDED, async (t) => {
  const gw = await startGateway(t, {
    keys: [
      ROOT_KEY,
      { id: 'acme-ops', scopes: ACME_SCOPES, tenant: 'acme' },
      { id: 'reader', scopes: ['config:read'] },
    ],
    // acme's cluster is on loopback, which only the operator's allow-list opens to tenants.
    edit: (c) => void (c.upstreams = { allow: ['127.0.0.0/8'] }),
  });
  const root = { id: 'root', kind: 'system' as const, token: gw.tokens.root! };
  const acme = { id: 'acme-ops', kind: 'tenant' as const, token: gw.tokens['acme-ops']! };
  const s = new Session(gw);
  const started = Date.now();
  const gen = (r: HttpResult) => {
    assert.equal(typeof r.json.generation, 'number', r.text);
    return r.json.generation as number;
  };
  let subKey: { id: string; token: string } | undefined;
  let auditor: { id: string; token: string } | undefined;

  await t.test('the session', async () => {
    // --- tenant default, by the root key
    await s.write(root, 'default', 'config/set/cluster/api', { operation: 'config.set', target: 'cluster/api', status: 200 }, { targets: ['127.0.0.1:9'] });
    await s.write(root, 'default', 'config/set/route/api', { operation: 'config.set', target: 'route/api', status: 200 }, { pathPrefix: '/api', cluster: 'api' });
    assert.equal((await s.call(root.token, 'POST', 'default', 'publish/dry-run')).status, 200, 'dry-run (a read: not recorded)');
    const g1 = gen(await s.write(root, 'default', 'publish/go', { operation: 'publish.go', target: null, status: 200, generation: gen }));

    // --- tenant acme, by its tenant-bound key
    await s.write(acme, 'acme', 'config/set/cluster/web', { operation: 'config.set', target: 'cluster/web', status: 200 }, { targets: ['127.0.0.1:9'] });
    await s.write(acme, 'acme', 'config/set/route/web', { operation: 'config.set', target: 'route/web', status: 200 }, { hosts: ['acme.example'], pathPrefix: '/', cluster: 'web' });
    const acmeDry = await s.call(acme.token, 'POST', 'acme', 'publish/dry-run');
    assert.equal(acmeDry.status, 200, acmeDry.text);
    const gAcme = gen(await s.write(acme, 'acme', 'publish/go', { operation: 'publish.go', target: null, status: 200, generation: gen }));
    assert.ok(gAcme > g1);

    // --- back to default: a second generation, a delete, plugin lifecycle
    await s.write(root, 'default', 'config/set/route/ping', { operation: 'config.set', target: 'route/ping', status: 200 }, { pathPrefix: '/ping', directResponse: { statusCode: 200, body: 'pong' } });
    const g2 = gen(await s.write(root, 'default', 'publish/go', { operation: 'publish.go', target: null, status: 200, generation: gen }));
    assert.ok(g2 > gAcme);
    await s.write(root, 'default', 'config/delete/route/ping', { operation: 'config.delete', target: 'route/ping', status: 200 });
    await s.write(root, 'default', 'plugin/disable/cors', { operation: 'plugin.disable', target: 'cors', status: 200 });
    await s.write(root, 'default', 'plugin/enable/cors', { operation: 'plugin.enable', target: 'cors', status: 200 });
    await s.write(root, 'default', 'plugin/disable/no-such-step', { operation: 'plugin.disable', target: 'no-such-step', status: 404 });

    // a draft that does not compile: dry-run 422 (not recorded), publish 422 (recorded, no generation)
    await s.write(root, 'default', 'config/set/route/broken', { operation: 'config.set', target: 'route/broken', status: 200 }, { pathPrefix: '/broken', cluster: 'nope' });
    assert.equal((await s.call(root.token, 'POST', 'default', 'publish/dry-run')).status, 422);
    const rejected = await s.write(root, 'default', 'publish/go', { operation: 'publish.go', target: null, status: 422 });
    assert.equal(rejected.json.code, 'Svc.Publish.Rejected');

    await s.write(root, 'default', 'config/delete/route/ghost', { operation: 'config.delete', target: 'route/ghost', status: 404 });
    const rb = await s.write(root, 'default', `publish/rollback/${g1}`, { operation: 'publish.rollback', target: `generation ${g1}`, status: 200, generation: gen });
    assert.ok(rb.json.generation > g2, 'a rollback publishes a new generation');

    // a body that is not JSON: refused with 400, recorded
    await s.write(root, 'default', 'config/set/route/badjson', { operation: 'config.set', target: 'route/badjson', status: 400 }, '{"pathPrefix": ', {
      'content-type': 'application/json',
    });

    // a key without config:write: 403 Scope, recorded with that key
    const reader = { id: 'reader', kind: 'system' as const, token: gw.tokens.reader! };
    const noScope = await s.write(reader, 'default', 'config/set/route/sneaky', { operation: 'config.set', target: 'route/sneaky', status: 403 }, { pathPrefix: '/s', cluster: 'api' });
    assert.equal(noScope.json.code, 'Svc.Auth.Scope');

    // the acme key writing into default: 403 TenantScope, recorded in default's trail (the path's tenant)
    const intruder = await s.write(acme, 'default', 'config/set/route/intruder', { operation: 'config.set', target: 'route/intruder', status: 403 }, { pathPrefix: '/i', cluster: 'api' });
    assert.equal(intruder.json.code, 'Svc.Auth.TenantScope');

    // calls that fail authentication are not recorded
    for (const token of [newToken(), 'syk_not-a-real-key']) {
      const unauth = await s.call(token, 'POST', 'default', 'config/set/route/anon', { pathPrefix: '/anon', cluster: 'api' });
      assert.equal(unauth.status, 401);
    }
    const noHeader = await request(`${gw.adminUrl}/api/v1/default/publish/go`, { method: 'POST' });
    assert.equal(noHeader.status, 401);

    // --- acme: sub-keys, issued, used, refused, revoked, deleted
    const issued = await s.write(acme, 'acme', 'key/issue', { operation: 'key.issue', target: null, status: 201 }, { name: 'ci-reader', scopes: ['config:read'] });
    subKey = { id: issued.json.id, token: issued.json.token };
    assert.match(subKey.id, /^key_/);
    s.expected.get('acme')!.at(-1)!.target = subKey.id; // the key id, known only from the answer
    const sub = { id: subKey.id, kind: 'tenant' as const, token: subKey.token };
    const subRefused = await s.write(sub, 'acme', 'config/set/route/x', { operation: 'config.set', target: 'route/x', status: 403 }, { hosts: ['acme.example'], pathPrefix: '/x', cluster: 'web' });
    assert.equal(subRefused.json.code, 'Svc.Auth.Scope');
    const tooMuch = await s.write(acme, 'acme', 'key/issue', { operation: 'key.issue', target: null, status: 403 }, { name: 'too-much', scopes: ['*'] });
    assert.equal(tooMuch.json.code, 'Svc.Auth.Scope');
    await s.write(acme, 'acme', 'key/issue', { operation: 'key.issue', target: null, status: 400 }, { name: '', scopes: [] });
    await s.write(acme, 'acme', `key/revoke/${subKey.id}`, { operation: 'key.revoke', target: subKey.id, status: 200 });
    // the revoked key no longer authenticates: a 401, not recorded
    assert.equal((await s.call(subKey.token, 'POST', 'acme', 'config/set/route/x', { hosts: ['acme.example'], pathPrefix: '/x', cluster: 'web' })).status, 401);
    await s.write(acme, 'acme', `key/delete/${subKey.id}`, { operation: 'key.delete', target: subKey.id, status: 200 });
    await s.write(acme, 'acme', `key/revoke/${subKey.id}`, { operation: 'key.revoke', target: subKey.id, status: 404 });

    // the root key writing into acme is in acme's trail under its own identity
    await s.write(root, 'acme', 'plugin/disable/cors', { operation: 'plugin.disable', target: 'cors', status: 200 });

    // an audit-only sub-key, for the isolation checks below
    const aud = await s.write(acme, 'acme', 'key/issue', { operation: 'key.issue', target: null, status: 201 }, { name: 'auditor', scopes: ['audit:read'] });
    auditor = { id: aud.json.id, token: aud.json.token };
    s.expected.get('acme')!.at(-1)!.target = auditor.id;

    // reads are never recorded
    assert.equal((await s.call(root.token, 'GET', 'default', 'config/get/route/api')).status, 200);
    assert.equal((await s.call(acme.token, 'GET', 'acme', 'key/list')).status, 200);
    assert.equal((await s.call(root.token, 'GET', 'default', 'publish/history')).status, 200);
  });

  await t.test('audit list shows exactly these writes, newest first, with identities, targets, statuses, traceIds and generations', async () => {
    for (const tenant of ['default', 'acme']) {
      const body = await mustList(gw, root.token, tenant);
      assert.equal(body.tenant, tenant);
      assert.equal(body.next, null, 'everything fits in the default page');
      sameEntries(strip(body.items), s.newestFirst(tenant), `${tenant}'s trail`);

      const ids = body.items.map((i) => i.id);
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! > ids[i]!, `ids strictly decreasing: ${ids}`);
      for (const i of body.items) {
        assert.ok(Number.isInteger(i.id) && i.id > 0);
        assert.match(i.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'at is an ISO timestamp');
        const at = Date.parse(i.at);
        assert.ok(at >= started - 1000 && at <= Date.now() + 1000, `at ${i.at} within the session`);
      }
      for (let i = 1; i < body.items.length; i++) assert.ok(Date.parse(body.items[i - 1]!.at) >= Date.parse(body.items[i]!.at), 'newest first');
    }
    // spot checks, in case the expected lists were built wrong
    const d = (await mustList(gw, root.token, 'default')).items;
    assert.ok(!d.some((i) => i.operation === 'publish.dry-run'), 'dry-run is a read');
    assert.deepEqual(
      d.filter((i) => i.generation !== null).map((i) => i.operation),
      ['publish.rollback', 'publish.go', 'publish.go'],
      'generations on the successful publish go and rollback only',
    );
    assert.equal(d.find((i) => i.operation === 'publish.go' && i.status === 422)?.generation, null);
    assert.ok(d.some((i) => i.identity.id === 'acme-ops' && i.status === 403), "the refused cross-tenant write is in default's trail");
  });

  await t.test('paging with limit and before walks the whole trail, newest first', async () => {
    const all = (await mustList(gw, root.token, 'default', '?limit=500')).items;
    assert.ok(all.length >= 10);
    for (const limit of [1, 3, 4, all.length]) {
      const seen: ListBody['items'] = [];
      let before: number | null = null;
      for (let page = 0; ; page++) {
        assert.ok(page <= all.length + 1, 'paging terminates');
        const body = await mustList(gw, root.token, 'default', `?limit=${limit}${before === null ? '' : `&before=${before}`}`);
        assert.ok(body.items.length <= limit);
        if (before !== null) assert.ok(body.items.every((i) => i.id < before!), 'a page holds only older entries than before');
        seen.push(...body.items);
        assert.ok(seen.length <= all.length, `paging returned more entries than the trail holds (${seen.length} > ${all.length})`);
        if (body.next === null) break;
        assert.equal(body.next, body.items.at(-1)!.id, 'next is the id of the last item on the page');
        before = body.next;
      }
      sameEntries(seen, all, `pages of ${limit} concatenated`);
    }
    const first = await mustList(gw, root.token, 'default', '?limit=2');
    sameEntries(first.items, all.slice(0, 2), 'the first page of 2');
    assert.equal(first.next, all[1]!.id);
    const oldest = await mustList(gw, root.token, 'default', `?before=${all.at(-1)!.id}`);
    assert.equal(JSON.stringify(oldest), JSON.stringify({ tenant: 'default', items: [], next: null }));
  });

  await t.test('a bad limit or before is 400 Svc.Request.BadQuery', async () => {
    for (const q of ['?limit=0', '?limit=501', '?limit=abc', '?limit=-1', '?limit=1.5', '?limit=', '?before=abc', '?before=0', '?limit=10&before=-3']) {
      const r = await auditList(gw, root.token, 'default', q);
      assert.equal(r.status, 400, `${q}: ${r.text}`);
      assert.equal(envelopeProblem(r), null, r.text);
      assert.equal(r.json.code, 'Svc.Request.BadQuery', q);
    }
    assert.equal((await auditList(gw, root.token, 'default', '?limit=500')).status, 200);
    assert.equal((await auditList(gw, root.token, 'default', '?limit=1')).status, 200);
  });

  await t.test('tenant isolation: a tenant-bound key sees only its tenant, and gets 403 TenantScope elsewhere', async () => {
    const acmeTrail = s.newestFirst('acme');
    for (const [who, token] of [
      ['acme-ops (system key bound to acme)', acme.token],
      ['auditor (sub-key of acme)', auditor!.token],
    ] as const) {
      const own = await mustList(gw, token, 'acme');
      sameEntries(strip(own.items), acmeTrail, `${who} sees acme's trail`);
      assert.ok(own.items.every((i) => i.tenant === 'acme'));
      for (const other of ['default', 'globex']) {
        const r = await auditList(gw, token, other);
        assert.equal(r.status, 403, `${who} on ${other}: ${r.text}`);
        assert.equal(r.json.code, 'Svc.Auth.TenantScope');
        assert.equal(envelopeProblem(r), null);
      }
    }
    // the root key sees each tenant's own trail; a tenant with no writes has an empty one
    assert.ok((await mustList(gw, root.token, 'default')).items.every((i) => i.tenant === 'default'));
    assert.equal(JSON.stringify(await mustList(gw, root.token, 'globex')), JSON.stringify({ tenant: 'globex', items: [], next: null }));
    // audit:read is required
    const noScope = await auditList(gw, gw.tokens.reader!, 'default');
    assert.equal(noScope.status, 403);
    assert.equal(noScope.json.code, 'Svc.Auth.Scope');
    assert.equal(noScope.json.requiredScope, 'audit:read');
    assert.equal((await auditList(gw, newToken(), 'default')).status, 401);
  });

  await t.test('reading the trail records nothing, and the trail holds no token', async () => {
    for (const tenant of ['default', 'acme']) sameEntries(strip((await mustList(gw, root.token, tenant)).items), s.newestFirst(tenant), `${tenant}'s trail after reads`);
    const text = (await auditList(gw, root.token, 'default')).text + (await auditList(gw, root.token, 'acme')).text;
    for (const token of [root.token, acme.token, gw.tokens.reader!, subKey!.token, auditor!.token]) {
      assert.ok(!text.includes(token), 'no token in the audit trail');
    }
  });
});

// The rollback handler sets the `generation N` target only once the rollback succeeded;
// a refused rollback falls back to the bare path parameter ("999").
test('a refused rollback is recorded with the target `generation N` too', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY, { id: 'reader', scopes: ['publish:read', 'audit:read'] }] });
  const notFound = await request(`${gw.adminUrl}/api/v1/default/publish/rollback/999`, { method: 'POST', token: gw.tokens.root, timeoutMs: 20_000 });
  assert.equal(notFound.status, 404, notFound.text);
  const noScope = await request(`${gw.adminUrl}/api/v1/default/publish/rollback/1`, { method: 'POST', token: gw.tokens.reader, timeoutMs: 20_000 });
  assert.equal(noScope.status, 403, noScope.text);
  const items = (await mustList(gw, gw.tokens.root!, 'default')).items;
  assert.deepEqual(
    items.map((i) => [i.operation, i.status, i.target, i.traceId]),
    [
      ['publish.rollback', 403, 'generation 1', noScope.headers['x-trace-id']],
      ['publish.rollback', 404, 'generation 999', notFound.headers['x-trace-id']],
    ],
  );
});
