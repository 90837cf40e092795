import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startGateway, writeJson } from './helpers/gateway.js';
import { ROOT_KEY } from './helpers/admin.js';
import { runCli, type CliResult } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { BOUNDED } from './helpers/wait.js';
import { SUB_KEY, listKeys } from './helpers/keys.js';
import type { Json } from './helpers/json.js';

function ok(r: CliResult, what: string): Json {
  assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stdout}${r.stderr}`);
  assert.notEqual(r.json, undefined, `${what}: JSON on stdout`);
  return r.json;
}

function refusedCli(r: CliResult, code: string, what: string): Json {
  assert.equal(r.code, 2, `${what}: exit ${r.code}\n${r.stdout}${r.stderr}`);
  assert.equal(r.json?.code, code, `${what}: ${r.stdout}`);
  return r.json;
}

test('key issue|list|revoke|delete and audit list, end to end against a gateway', BOUNDED, async (t) => {
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  const root = gw.tokens.root!;
  // --admin and --token from the environment; --tenant always given
  const cli = (args: string[], opts: { token?: string; input?: string } = {}) =>
    runCli(args, { env: { SWITCHYARD_ADMIN: gw.adminUrl, SWITCHYARD_TOKEN: opts.token ?? root }, input: opts.input });

  // issue, with flags: comma-separated scopes and a ttl
  const ci = ok(await cli(['key', 'issue', '--tenant', 'acme', '--name', 'ci', '--scope', 'config:read,key:read', '--ttl', '60']), 'issue with flags');
  assert.match(ci.token, SUB_KEY);
  assert.equal(ci.tenant, 'acme');
  assert.equal(ci.name, 'ci');
  assert.deepEqual(ci.scopes, ['config:read', 'key:read']);
  assert.equal(ci.state, 'active');
  assert.equal(ci.issuer, 'root');
  assert.equal(Date.parse(ci.expiresAt) - Date.parse(ci.createdAt), 60_000);

  // repeated --scope, and --admin/--token as flags rather than variables
  const multi = ok(
    await runCli(['key', 'issue', '--admin', gw.adminUrl, '--token', root, '--tenant', 'acme', '--name', 'multi', '--scope', 'config:read', '--scope', 'publish:read']),
    'issue with repeated --scope',
  );
  assert.deepEqual(multi.scopes, ['config:read', 'publish:read']);
  assert.equal(multi.expiresAt, null);

  // the body from stdin, and from -f
  const fromStdin = ok(
    await cli(['key', 'issue', '--tenant', 'acme'], { input: JSON.stringify({ name: 'from-stdin', scopes: ['key:write', 'config:read'], ttlSeconds: 120 }) }),
    'issue from stdin',
  );
  assert.equal(fromStdin.name, 'from-stdin');
  assert.deepEqual(fromStdin.scopes, ['key:write', 'config:read']);
  assert.equal(Date.parse(fromStdin.expiresAt) - Date.parse(fromStdin.createdAt), 120_000);
  const bodyFile = writeJson(join(gw.dir, 'key.json'), { name: 'from-file', scopes: ['audit:read'] });
  const fromFile = ok(await cli(['key', 'issue', '--tenant', 'globex', '-f', bodyFile]), 'issue from -f');
  assert.equal(fromFile.tenant, 'globex');
  assert.deepEqual(fromFile.scopes, ['audit:read']);

  const badJson = await cli(['key', 'issue', '--tenant', 'acme'], { input: '{not json' });
  refusedCli(badJson, 'Cli.Input', 'a stdin body that is not JSON');

  // the issued token works as the CLI's token
  const who = ok(await cli(['whoami'], { token: ci.token }), 'whoami with the sub-key');
  assert.deepEqual([who.kind, who.tenant, who.scopes], ['tenant', 'acme', ['config:read', 'key:read']]);

  // refusals exit 2 with the envelope
  const invalid = refusedCli(await cli(['key', 'issue', '--tenant', 'acme', '--name', 'bad', '--scope', 'config:admin']), 'Svc.Key.Invalid', 'a bad scope');
  assert.equal(typeof invalid.traceId, 'string');
  const lacking = refusedCli(await cli(['key', 'issue', '--tenant', 'acme', '--name', 'x', '--scope', 'config:read'], { token: ci.token }), 'Svc.Auth.Scope', 'issue without key:write');
  assert.equal(lacking.requiredScope, 'key:write');
  const escalate = refusedCli(
    await cli(['key', 'issue', '--tenant', 'acme', '--name', 'x', '--scope', 'config:write'], { token: fromStdin.token }),
    'Svc.Auth.Scope',
    'an escalation',
  );
  assert.equal(escalate.requiredScope, 'config:write');
  assert.equal(escalate.message, 'Cannot grant config:write: the issuing key lacks config:write');
  refusedCli(await cli(['key', 'list', '--tenant', 'globex'], { token: ci.token }), 'Svc.Auth.TenantScope', "another tenant's list");

  // list: by root and by the key itself (key:read); never a plaintext
  for (const token of [root, ci.token]) {
    const l = await cli(['key', 'list', '--tenant', 'acme'], { token });
    const body = ok(l, 'key list');
    assert.equal(body.tenant, 'acme');
    assert.deepEqual(body.items.map((i: { name: string }) => i.name).sort(), ['ci', 'from-stdin', 'multi']);
    assert.ok(!l.stdout.includes('syk_'), 'no plaintext in the list');
    const mine = body.items.find((i: { id: string }) => i.id === ci.id);
    assert.equal(mine.state, 'active');
    assert.notEqual(mine.lastUsedAt, null, 'used by whoami above');
  }
  const defaultList = ok(await cli(['key', 'list']), 'key list in the default tenant');
  assert.deepEqual(defaultList, { tenant: 'default', items: [] });

  // revoke: 0, then the key is refused; unknown id: 2
  const rv = ok(await cli(['key', 'revoke', ci.id, '--tenant', 'acme']), 'revoke');
  assert.equal(rv.id, ci.id);
  assert.equal(rv.state, 'revoked');
  refusedCli(await cli(['whoami'], { token: ci.token }), 'Svc.Auth.Unauthenticated', 'whoami with the revoked key');
  refusedCli(await cli(['key', 'revoke', 'key_nosuchkey', '--tenant', 'acme']), 'Svc.Key.NotFound', 'revoke an unknown id');
  refusedCli(await cli(['key', 'revoke', ci.id, '--tenant', 'globex']), 'Svc.Key.NotFound', "revoke through another tenant's path");

  // delete: 0, gone; again: 2
  const del = ok(await cli(['key', 'delete', multi.id, '--tenant', 'acme']), 'delete');
  assert.deepEqual(del, { id: multi.id, tenant: 'acme', deleted: true });
  assert.deepEqual((await listKeys(gw, root, 'acme')).items.map((i) => i.name).sort(), ['ci', 'from-stdin']);
  refusedCli(await cli(['key', 'delete', multi.id, '--tenant', 'acme']), 'Svc.Key.NotFound', 'delete again');

  // audit list: every write in acme, newest first, refused ones included
  const full = ok(await cli(['audit', 'list', '--tenant', 'acme', '--limit', '500']), 'audit list');
  assert.equal(full.tenant, 'acme');
  assert.equal(full.next, null);
  const entries = [...full.items].reverse();
  const sys = { id: 'root', kind: 'system' };
  assert.deepEqual(
    entries.map((e: Json) => [e.operation, e.status, e.target, e.identity]),
    [
      ['key.issue', 201, ci.id, sys],
      ['key.issue', 201, multi.id, sys],
      ['key.issue', 201, fromStdin.id, sys],
      ['key.issue', 400, null, sys],
      ['key.issue', 403, null, { id: ci.id, kind: 'tenant' }],
      ['key.issue', 403, null, { id: fromStdin.id, kind: 'tenant' }],
      ['key.revoke', 200, ci.id, sys],
      ['key.revoke', 404, 'key_nosuchkey', sys],
      ['key.delete', 200, multi.id, sys],
      ['key.delete', 404, multi.id, sys],
    ],
  );
  for (const e of full.items) {
    assert.equal(e.tenant, 'acme');
    assert.equal(typeof e.traceId, 'string');
    assert.ok(!Number.isNaN(Date.parse(e.at)));
    assert.equal(e.generation, null);
  }
  const ids: number[] = full.items.map((e: { id: number }) => e.id);
  assert.deepEqual(ids, [...ids].sort((a, b) => b - a), 'newest first');
  assert.ok(!JSON.stringify(full).includes('syk_'));

  // paging: --limit 3 then --before next until next is null
  const pages: number[][] = [];
  let before: number | null = null;
  for (let i = 0; i < 10; i++) {
    const args = ['audit', 'list', '--tenant', 'acme', '--limit', '3', ...(before !== null ? ['--before', String(before)] : [])];
    const page = ok(await cli(args), `audit page ${i}`);
    assert.ok(page.items.length <= 3);
    pages.push(page.items.map((e: { id: number }) => e.id));
    if (page.items.length === 3) assert.equal(page.next, page.items[2].id, '`next` is the last id of a full page');
    if (page.next === null) break;
    if (before !== null) assert.ok(page.next < before);
    before = page.next;
  }
  assert.deepEqual(pages.flat(), ids, 'the pages, in order, are the whole trail');
  assert.deepEqual(pages.map((p) => p.length), [3, 3, 3, 1]);

  // a --before in the middle
  const mid = ok(await cli(['audit', 'list', '--tenant', 'acme', '--before', String(ids[4]), '--limit', '2']), 'audit list --before');
  assert.deepEqual(mid.items.map((e: { id: number }) => e.id), ids.slice(5, 7));

  // globex's trail holds only the globex writes (the refused revoke was aimed at globex)
  const globex = ok(await cli(['audit', 'list', '--tenant', 'globex']), 'audit list globex');
  assert.deepEqual(
    globex.items.map((e: Json) => [e.operation, e.status, e.target]),
    [
      ['key.revoke', 404, ci.id],
      ['key.issue', 201, fromFile.id],
    ],
  );
  // audit:read is needed; the globex sub-key has it, in globex only
  ok(await cli(['audit', 'list', '--tenant', 'globex'], { token: fromFile.token }), 'audit list with audit:read');
  refusedCli(await cli(['audit', 'list', '--tenant', 'acme'], { token: fromFile.token }), 'Svc.Auth.TenantScope', "another tenant's trail");
  refusedCli(await cli(['audit', 'list', '--tenant', 'acme'], { token: fromStdin.token }), 'Svc.Auth.Scope', 'audit list without audit:read');
});

test('key and audit commands exit 4 when the admin port cannot be reached', BOUNDED, async () => {
  const port = await freePort(); // free now, so nothing answers there
  const admin = `http://127.0.0.1:${port}`;
  const commands = [
    ['key', 'issue', '--tenant', 'acme', '--name', 'x', '--scope', 'config:read'],
    ['key', 'list', '--tenant', 'acme'],
    ['key', 'revoke', 'key_x'],
    ['key', 'delete', 'key_x'],
    ['audit', 'list', '--limit', '5'],
  ];
  for (const args of commands) {
    const r = await runCli([...args, '--admin', admin, '--token', 'x'.repeat(40)]);
    assert.equal(r.code, 4, `${args.join(' ')}: ${r.stdout} ${r.stderr}`);
    assert.equal(r.json?.code, 'Cli.Unreachable');
  }
});
