import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { startGateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { ROOT_KEY } from './helpers/admin.js';
import { BOUNDED } from './helpers/wait.js';
import {
  NO_THROTTLE,
  breakChecksum,
  deleteKeyRaw,
  fingerprintOf,
  forgeWellFormedKey,
  issueKey,
  issueKeyRaw,
  listKeys,
  randomPart,
  revokeKeyRaw,
  whoami,
} from './helpers/keys.js';

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** Every file under `dir` (path relative to it) -> its bytes, read now. */
function snapshot(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const f of filesUnder(dir).sort()) {
    try {
      out.set(relative(dir, f), readFileSync(f));
    } catch (err) {
      // a -wal or -shm may go between the listing and the read
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return out;
}

test('no sub-key plaintext reaches the volume, worker.json or the logs; the fingerprints do', BOUNDED, async (t) => {
  const gw = await startGateway(t, {
    keys: [ROOT_KEY],
    workers: 1,
    volume: 'virtual://data/keys.db',
    logLevel: 'debug',
    edit: NO_THROTTLE,
  });
  const root = gw.tokens.root!;

  // Several keys, in two tenants, each used.
  const ci = await issueKey(gw, root, 'acme', { name: 'ci', scopes: ['config:read', 'key:write'] });
  const ops = await issueKey(gw, root, 'acme', { name: 'ops', scopes: ['*'] });
  const ro = await issueKey(gw, root, 'globex', { name: 'ro', scopes: ['config:read'], ttlSeconds: 3600 });
  const child = await issueKey(gw, ci.token, 'acme', { name: 'child', scopes: ['config:read'] });
  const doomed = await issueKey(gw, root, 'acme', { name: 'doomed', scopes: ['config:read'] });
  const revoked = await issueKey(gw, root, 'acme', { name: 'revoked', scopes: ['config:read'] });
  const all = [ci, ops, ro, child, doomed, revoked];

  for (const k of all) {
    assert.equal((await whoami(gw, k.token)).status, 200, `${k.name} works`);
    const cl = await request(`${gw.adminUrl}/api/v1/${k.tenant}/config/list/route`, { token: k.token });
    assert.equal(cl.status, 200, `${k.name}: ${cl.text}`);
  }
  // writes by sub-keys (audited), and a refused escalation
  const set = await request(`${gw.adminUrl}/api/v1/acme/config/set/route/r`, {
    method: 'POST',
    token: ops.token,
    body: { pathPrefix: '/r', directResponse: { statusCode: 200, body: 'r' } },
  });
  assert.equal(set.status, 200, set.text);
  assert.equal((await issueKeyRaw(gw, ci.token, 'acme', { name: 'more', scopes: ['config:write'] })).status, 403);
  // a sub-key on a path it may not reach
  assert.equal((await request(`${gw.adminUrl}/api/v1/globex/config/list/route`, { token: ops.token })).status, 403);

  // failed uses: wrong checksums (in the random part and in the checksum), a forged well-formed key
  const variants = [breakChecksum(ci.token, 'random'), breakChecksum(ops.token, 'checksum')];
  const forged = forgeWellFormedKey();
  for (const bad of [...variants, forged]) assert.equal((await whoami(gw, bad)).status, 401);

  // one revoked (then presented), one deleted (then presented)
  assert.equal((await revokeKeyRaw(gw, root, 'acme', revoked.id)).status, 200);
  assert.equal((await whoami(gw, revoked.token)).status, 401);
  assert.equal((await deleteKeyRaw(gw, root, 'acme', doomed.id)).status, 200);
  assert.equal((await whoami(gw, doomed.token)).status, 401);
  // Regression: a token pasted where the key id goes reached the log (the path) and the
  // audit trail (the target) in plaintext.
  assert.equal((await revokeKeyRaw(gw, root, 'acme', ops.token)).status, 404);
  assert.equal((await deleteKeyRaw(gw, root, 'globex', ro.token)).status, 404);
  const audit = await request(`${gw.adminUrl}/api/v1/acme/audit/list`, { token: root });
  assert.ok(audit.json.items.some((i: { target: string }) => i.target === '[redacted sub-key]'), `the audit names the redacted token: ${audit.text.slice(0, 300)}`);

  // lastUsedAt reaches the volume too (the list flushes it)
  const listed = (await listKeys(gw, root, 'acme')).items;
  assert.ok(listed.find((i) => i.id === ci.id)?.lastUsedAt, 'usage recorded');

  // While it runs: the volume with its -wal and -shm.
  const live = snapshot(gw.dir);
  t.diagnostic(`files while running: ${[...live.keys()].join(', ')}`);
  assert.ok(live.has(join('data', 'keys.db-wal')), `a WAL while running, among ${[...live.keys()].join(', ')}`);

  const stopped = await gw.stop('SIGTERM');
  assert.equal(stopped.code, 0, `clean stop: ${JSON.stringify(stopped)}`);

  // At rest: every file of the gateway's folder, and what the process printed.
  const atRest = snapshot(gw.dir);
  const names = [...atRest.keys()];
  t.diagnostic(`files at rest: ${names.join(', ')}`);
  assert.ok(atRest.has('worker.json'), `worker.json among ${names.join(', ')}`);
  assert.ok(atRest.has(join('data', 'keys.db')), `the volume among ${names.join(', ')}`);
  const blobs: [string, Buffer][] = [
    ...[...live].map(([name, bytes]): [string, Buffer] => [`${name} (while running)`, bytes]),
    ...atRest,
    ['stdout', Buffer.from(gw.stdout(), 'utf8')],
    ['stderr', Buffer.from(gw.stderr(), 'utf8')],
  ];
  const volumeBytes = (m: Map<string, Buffer>) => Buffer.concat([...m].filter(([n]) => n.startsWith(join('data', 'keys.db'))).map(([, b]) => b));

  // The grep looks at the right place: the logs hold the calls, the volume the fingerprints.
  const calls = gw.logLines().filter((l) => l.msg === 'admin call');
  assert.ok(calls.length >= 25, `the admin calls were logged (${calls.length})`);
  for (const k of [ci, ops, ro, child]) assert.ok(calls.some((l) => l.identity === k.id), `a logged call by ${k.name}`);
  assert.ok(calls.some((l) => l.status === 401), 'the refused calls were logged');
  for (const [when, db] of [['while running', volumeBytes(live)], ['at rest', volumeBytes(atRest)]] as const) {
    for (const k of [ci, ops, ro, child, revoked]) {
      assert.ok(db.includes(fingerprintOf(k.token)), `the fingerprint of ${k.name} is in the volume ${when}`);
      assert.ok(db.includes(k.id), `the id of ${k.name} is in the volume ${when}`);
    }
  }

  const secrets: [string, string][] = [];
  for (const k of all) {
    secrets.push([`${k.name} token`, k.token], [`${k.name} random part`, randomPart(k.token)]);
  }
  variants.forEach((v, i) => secrets.push([`checksum variant ${i}`, v], [`checksum variant ${i} random part`, randomPart(v)]));
  secrets.push(['forged key', forged], ['forged key random part', randomPart(forged)]);

  const found: string[] = [];
  for (const [where, bytes] of blobs) {
    for (const [what, secret] of secrets) {
      if (bytes.includes(Buffer.from(secret, 'utf8'))) found.push(`${what} in ${where}`);
      // SQLite text could also be stored as UTF-16
      if (bytes.includes(Buffer.from(secret, 'utf16le'))) found.push(`${what} (UTF-16) in ${where}`);
    }
    if (bytes.includes(Buffer.from('syk_'))) found.push(`the syk_ prefix in ${where}`);
  }
  assert.deepEqual(found, [], 'no plaintext at rest');
});
