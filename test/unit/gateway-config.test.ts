import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGatewayConfig, upstreamRules } from '../../src/shared/gateway-config.js';
import { parseHostPort } from '../../src/shared/host-port.js';
import type { Json } from '../helpers/json.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-unit-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const TOKEN = 'T'.repeat(40);
const ENV = { ROOT_TOKEN: TOKEN };

function base(): Record<string, Json> {
  return {
    volume: 'memory:',
    listen: { port: 8080 },
    admin: { listen: '127.0.0.1:9180', keys: [{ id: 'root', tokenEnv: 'ROOT_TOKEN', scopes: ['*'] }] },
  };
}

function load(value: unknown, env: NodeJS.ProcessEnv = ENV) {
  const file = join(dir, `w${n++}.json`);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return { file, loaded: loadGatewayConfig(file, env) };
}

function paths(value: unknown, env: NodeJS.ProcessEnv = ENV): string[] {
  const { loaded } = load(value, env);
  assert.equal(loaded.ok, false, 'expected the config to be rejected');
  assert.equal(loaded.config, undefined);
  return loaded.errors.map((e) => e.path);
}

test('a minimal config loads, with the documented defaults filled in and no warnings', () => {
  const { file, loaded } = load(base());
  assert.equal(loaded.ok, true, JSON.stringify(loaded.errors));
  assert.deepEqual(loaded.errors, []);
  assert.deepEqual(loaded.warnings, []);
  assert.equal(loaded.baseDir, dir, `baseDir is the folder of ${file}`);
  const c = loaded.config!;
  assert.equal(c.listen.host, '0.0.0.0');
  assert.equal(c.log.level, 'info');
  assert.equal(c.drain.graceMs, 10_000);
  assert.equal(c.workers, undefined, 'workers defaults at run time (available parallelism)');
});

test('unknown fields fail at every level, each named by its path', () => {
  const cases: [string, (c: Record<string, Json>) => void][] = [
    ['extra', (c) => (c.extra = true)],
    ['listen.extra', (c) => (c.listen.extra = true)],
    ['admin.extra', (c) => (c.admin.extra = true)],
    ['admin.keys.0.extra', (c) => (c.admin.keys[0].extra = true)],
    ['log.extra', (c) => (c.log = { extra: true })],
    ['drain.extra', (c) => (c.drain = { extra: true })],
  ];
  for (const [path, edit] of cases) {
    const c = base();
    edit(c);
    const { loaded } = load(c);
    assert.equal(loaded.ok, false, path);
    assert.deepEqual(loaded.errors, [{ path, message: 'unknown field' }], path);
  }
});

test('required fields: volume, listen.port and admin.listen', () => {
  const noPort = base();
  delete noPort.listen.port;
  assert.deepEqual(paths(noPort), ['listen.port']);
  const noAdminListen = base();
  delete noAdminListen.admin.listen;
  assert.deepEqual(paths(noAdminListen), ['admin.listen']);
  const noVolume = base();
  delete noVolume.volume;
  assert.deepEqual(paths(noVolume), ['volume']);
  const noListen = base();
  delete noListen.listen;
  assert.deepEqual(paths(noListen), ['listen']);
});

test('values are checked: volume kind, ports, ip:port, worker count, log level, scopes, tenant', () => {
  const bad: [string, (c: Record<string, Json>) => void][] = [
    ['volume', (c) => (c.volume = 'disk:/tmp/x')],
    ['volume', (c) => (c.volume = 'virtual://')],
    ['listen.port', (c) => (c.listen.port = 0)],
    ['listen.port', (c) => (c.listen.port = 65536)],
    ['listen.port', (c) => (c.listen.port = '8080')],
    ['listen.host', (c) => (c.listen.host = 'localhost')],
    ['admin.listen', (c) => (c.admin.listen = '9180')],
    ['admin.listen', (c) => (c.admin.listen = 'localhost:9180')],
    ['admin.listen', (c) => (c.admin.listen = '127.0.0.1:70000')],
    ['workers', (c) => (c.workers = 0)],
    ['workers', (c) => (c.workers = 1.5)],
    ['log.level', (c) => (c.log = { level: 'verbose' })],
    ['admin.keys.0.scopes.0', (c) => (c.admin.keys[0].scopes = ['config:delete'])],
    ['admin.keys.0.scopes', (c) => (c.admin.keys[0].scopes = [])],
    ['admin.keys.0.tenant', (c) => (c.admin.keys[0].tenant = 'Not A Tenant')],
    ['admin.keys.0.tokenSha256', (c) => (c.admin.keys[0] = { id: 'h', tokenSha256: 'abc', scopes: ['*'] })],
  ];
  for (const [path, edit] of bad) {
    const c = base();
    edit(c);
    assert.ok(paths(c).includes(path), `${path} after ${edit.toString()}`);
  }
  const good: ((c: Record<string, Json>) => void)[] = [
    (c) => (c.volume = 'virtual://data/sy.db'),
    (c) => (c.admin.listen = '[::1]:9180'),
    (c) => (c.listen.host = '::'),
    (c) => (c.admin.keys[0].scopes = ['sys:*', 'config:read', 'plugin:write']),
    (c) => (c.admin.keys[0].tenant = 'acme-1'),
  ];
  for (const edit of good) {
    const c = base();
    edit(c);
    const { loaded } = load(c);
    assert.equal(loaded.ok, true, `${edit.toString()}: ${JSON.stringify(loaded.errors)}`);
  }
});

test('a key has exactly one of token, tokenSha256, tokenEnv', () => {
  const none = base();
  none.admin.keys = [{ id: 'k', scopes: ['*'] }];
  assert.equal(load(none).loaded.ok, false);
  const two = base();
  two.admin.keys = [{ id: 'k', token: TOKEN, tokenEnv: 'ROOT_TOKEN', scopes: ['*'] }];
  assert.equal(load(two).loaded.ok, false);
  const hashed = base();
  hashed.admin.keys = [{ id: 'k', tokenSha256: 'a'.repeat(64), scopes: ['*'] }];
  assert.deepEqual(load(hashed).loaded.warnings, [], 'a hashed token draws no warning');
});

test('limits.sendTimeoutMs: 30 s unless set, 100 ms to an hour, whole milliseconds', () => {
  assert.equal(load(base()).loaded.config!.limits.sendTimeoutMs, 30_000);
  assert.equal(load({ ...base(), limits: { sendTimeoutMs: 100 } }).loaded.config!.limits.sendTimeoutMs, 100);
  for (const v of [99, 3_600_001, 1.5, '1000']) assert.deepEqual([...new Set(paths({ ...base(), limits: { sendTimeoutMs: v } }))], ['limits.sendTimeoutMs'], String(v));
});

test('a tokenEnv that is unset (or empty) is an error naming the key field', () => {
  assert.deepEqual(paths(base(), {}), ['admin.keys.0.tokenEnv']);
  assert.deepEqual(paths(base(), { ROOT_TOKEN: '' }), ['admin.keys.0.tokenEnv']);
});

test('duplicate key ids are an error', () => {
  const c = base();
  c.admin.keys.push({ ...c.admin.keys[0] });
  // The copy shares the token too: both are errors.
  assert.deepEqual(paths(c), ['admin.keys.1.id', 'admin.keys.1']);
});

test('warnings: plaintext tokens, short tokens, no keys, an admin port on every interface', () => {
  const warningsOf = (c: Record<string, Json>, env: NodeJS.ProcessEnv = ENV) => {
    const { loaded } = load(c, env);
    assert.equal(loaded.ok, true, JSON.stringify(loaded.errors));
    return loaded.warnings;
  };

  const shortPlain = base();
  shortPlain.admin.keys = [{ id: 'weak', token: 'short', scopes: ['*'] }];
  const w1 = warningsOf(shortPlain);
  assert.equal(w1.length, 2, JSON.stringify(w1));
  assert.ok(w1.some((w) => w.includes('weak') && /plaintext/.test(w)));
  assert.ok(w1.some((w) => w.includes('weak') && /32/.test(w)));

  const longPlain = base();
  longPlain.admin.keys = [{ id: 'strong', token: TOKEN, scopes: ['*'] }];
  const w2 = warningsOf(longPlain);
  assert.equal(w2.length, 1, JSON.stringify(w2));
  assert.match(w2[0]!, /plaintext/);

  const exactly32 = base();
  exactly32.admin.keys = [{ id: 'edge', token: 'x'.repeat(32), scopes: ['*'] }];
  assert.equal(warningsOf(exactly32).length, 1, '32 characters is long enough');

  const shortEnv = warningsOf(base(), { ROOT_TOKEN: 'short' });
  assert.equal(shortEnv.length, 1, JSON.stringify(shortEnv));
  assert.ok(shortEnv[0]!.includes('ROOT_TOKEN') && /32/.test(shortEnv[0]!));

  const noKeys = base();
  noKeys.admin.keys = [];
  assert.equal(warningsOf(noKeys).length, 1);
  const absentKeys = base();
  delete absentKeys.admin.keys;
  assert.equal(warningsOf(absentKeys).length, 1, 'admin.keys may be omitted, with a warning');

  const open = base();
  open.admin.listen = '0.0.0.0:9180';
  assert.equal(warningsOf(open).length, 1);
});

test('unreadable input: not JSON, missing file', () => {
  const { loaded } = load('{"volume":');
  assert.equal(loaded.ok, false);
  assert.equal(loaded.errors.length, 1);
  assert.match(loaded.errors[0]!.message, /JSON/);
  const missing = loadGatewayConfig(join(dir, 'nope.json'), ENV);
  assert.equal(missing.ok, false);
  assert.match(missing.errors[0]!.message, /cannot read/);
});

test('parseHostPort accepts ip:port and [ipv6]:port only', () => {
  assert.deepEqual(parseHostPort('127.0.0.1:9180'), { host: '127.0.0.1', port: 9180 });
  assert.deepEqual(parseHostPort('[::1]:80'), { host: '::1', port: 80 });
  for (const bad of ['localhost:80', '127.0.0.1', '127.0.0.1:0', '127.0.0.1:65536', '::1:80', '300.1.1.1:80', '']) {
    assert.equal(parseHostPort(bad), null, bad);
  }
});

test('trustedProxies: addresses and CIDR blocks of either family; anything else is an error at its index', () => {
  assert.deepEqual(load(base()).loaded.config!.trustedProxies, [], 'default: no proxy is trusted');
  const ok = load({ ...base(), trustedProxies: ['10.0.0.0/8', '127.0.0.1', '2001:db8::/32', '::1', '::ffff:192.0.2.0/120'] }).loaded;
  assert.equal(ok.ok, true, JSON.stringify(ok.errors));
  assert.deepEqual(ok.config!.trustedProxies, ['10.0.0.0/8', '127.0.0.1', '2001:db8::/32', '::1', '::ffff:192.0.2.0/120']);
  assert.deepEqual(paths({ ...base(), trustedProxies: ['10.0.0.0/8', '10.0.0.0/33', 'proxy.example', '2001:db8::/129', '1.2.3.4/8/9', ''] }), [
    'trustedProxies.1',
    'trustedProxies.2',
    'trustedProxies.3',
    'trustedProxies.4',
    'trustedProxies.5',
  ]);
  assert.deepEqual(paths({ ...base(), trustedProxies: '10.0.0.0/8' }), ['trustedProxies']);
  assert.deepEqual(ok.warnings, []);
  const all = load({ ...base(), trustedProxies: ['10.0.0.0/8', '0.0.0.0/0', '::/0'] }).loaded;
  assert.equal(all.ok, true);
  assert.deepEqual(all.warnings.map((w) => w.split(' trusts')[0]), ['trustedProxies: 0.0.0.0/0', 'trustedProxies: ::/0']);
});

test('upstreams: CIDR lists, per-tenant lists by tenant name, strict; defaults empty; the rules carry both ports', () => {
  const ok = load({ ...base(), upstreams: { allow: ['127.0.0.1/32', '::1'], deny: ['10.0.0.0/8'], tenants: { acme: { allow: ['192.168.0.0/16'] } } } }).loaded;
  assert.equal(ok.ok, true, JSON.stringify(ok.errors));
  assert.deepEqual(ok.config!.upstreams.tenants.acme, { allow: ['192.168.0.0/16'], deny: [] });
  assert.deepEqual(upstreamRules(ok.config!).admin, { host: '127.0.0.1', port: 9180 });
  assert.deepEqual(upstreamRules(ok.config!).data, { host: '0.0.0.0', port: 8080 });
  const none = load(base()).loaded;
  assert.deepEqual(none.config!.upstreams, { allow: [], deny: [], tenants: {} });
  assert.deepEqual(paths({ ...base(), upstreams: { allow: ['10.0.0.0/33'] } }), ['upstreams.allow.0']);
  assert.deepEqual(paths({ ...base(), upstreams: { deny: ['example.com'] } }), ['upstreams.deny.0']);
  assert.deepEqual(paths({ ...base(), upstreams: { allows: [] } }), ['upstreams.allows']);
  assert.deepEqual(paths({ ...base(), upstreams: { tenants: { 'Bad Name': { allow: [] } } } }), ['upstreams.tenants.Bad Name']);
});

test('secrets.env: tenant -> variable names, default none; `*` only for the default tenant; a tokenEnv listed is a warning', () => {
  assert.deepEqual(load(base()).loaded.config!.secrets, { env: {} }, 'by default no tenant may name any variable');
  const ok = load({ ...base(), secrets: { env: { default: ['*'], acme: ['ACME_JWT', 'ROOT_TOKEN'] } } }).loaded;
  assert.equal(ok.ok, true, JSON.stringify(ok.errors));
  assert.deepEqual(ok.config!.secrets.env, { default: ['*'], acme: ['ACME_JWT', 'ROOT_TOKEN'] });
  assert.deepEqual(ok.warnings, ["secrets.env.acme: ROOT_TOKEN is an admin key's tokenEnv; no tenant may name it, listed or not"]);
  assert.deepEqual(paths({ ...base(), secrets: { env: { acme: ['*'] } } }), ['secrets.env.acme.0']);
  assert.deepEqual(paths({ ...base(), secrets: { env: { acme: ['NOT-A-NAME'] } } }), ['secrets.env.acme.0']);
  assert.deepEqual(paths({ ...base(), secrets: { env: { Acme: ['X'] } } }), ['secrets.env.Acme']);
  assert.deepEqual(paths({ ...base(), secrets: { other: {} } }), ['secrets.other']);
});

test('quotas and history: documented defaults, per-tenant overrides, unknown fields and bad tenant names refused', () => {
  const d = load(base()).loaded;
  assert.ok(d.ok, JSON.stringify(d.errors));
  assert.deepEqual(d.config!.quotas, { entities: 1000, documentBytes: 262144, totalBytes: 16777216, publishesPerMinute: 30, dryRunsPerMinute: 60, tenants: {} });
  assert.deepEqual(d.config!.history, { keep: 50 });
  const o = load({ ...base(), quotas: { entities: 10, tenants: { acme: { totalBytes: 1000 } } }, history: { keep: 3 } }).loaded;
  assert.ok(o.ok, JSON.stringify(o.errors));
  assert.deepEqual(o.config!.quotas.tenants, { acme: { totalBytes: 1000 } });
  assert.equal(o.config!.quotas.entities, 10);
  assert.deepEqual(paths({ ...base(), quotas: { tenants: { acme: { entites: 1 } } } }), ['quotas.tenants.acme.entites']);
  assert.deepEqual(paths({ ...base(), quotas: { tenants: { 'Bad Name': {} } } }), ['quotas.tenants.Bad Name']);
  assert.deepEqual(paths({ ...base(), quotas: { documentBytes: 2 * 1024 * 1024 } }), ['quotas.documentBytes']);
  assert.deepEqual(paths({ ...base(), history: { keep: 0 } }), ['history.keep']);
});

test('admin.maxConnectionsPerAddress: 64 by default, a positive integer up to 100000', () => {
  assert.equal(load(base()).loaded.config!.admin.maxConnectionsPerAddress, 64);
  const ok = base();
  ok.admin.maxConnectionsPerAddress = 3;
  assert.equal(load(ok).loaded.config!.admin.maxConnectionsPerAddress, 3);
  for (const bad of [0, -1, 2.5, 100_001, '8']) {
    const c = base();
    c.admin.maxConnectionsPerAddress = bad;
    assert.deepEqual(paths(c), ['admin.maxConnectionsPerAddress'], String(bad));
  }
});

test('admin.maxConnections: 1024 by default, an integer from 16 to 1000000', () => {
  assert.equal(load(base()).loaded.config!.admin.maxConnections, 1_024);
  const ok = base();
  ok.admin.maxConnections = 16;
  assert.equal(load(ok).loaded.config!.admin.maxConnections, 16);
  for (const bad of [15, 0, 20.5, 1_000_001, '64']) {
    const c = base();
    c.admin.maxConnections = bad;
    assert.deepEqual(paths(c), ['admin.maxConnections'], String(bad));
  }
});

test('listen.tls and secrets.keyEnv: a key must be set and 32 bytes; TLS without one warns; the TLS port may not be the data or admin port', () => {
  const tls = { ...base(), listen: { port: 8080, tls: { port: 8443 } } };
  const plain = load(tls);
  assert.equal(plain.loaded.ok, true, JSON.stringify(plain.loaded.errors));
  assert.match(plain.loaded.warnings.join('\n'), /secrets\.keyEnv is not: cert private keys are stored unencrypted/);

  const sealed = { ...tls, secrets: { keyEnv: 'SEAL' } };
  assert.deepEqual(paths(sealed), ['secrets.keyEnv'], 'the variable is unset');
  assert.deepEqual(paths(sealed, { ...ENV, SEAL: 'too-short' }), ['secrets.keyEnv']);
  for (const key of ['ab'.repeat(32), Buffer.alloc(32, 7).toString('base64')]) {
    const ok = load(sealed, { ...ENV, SEAL: key }).loaded;
    assert.equal(ok.ok, true, JSON.stringify(ok.errors));
    assert.deepEqual(ok.warnings, []);
  }
  assert.deepEqual(paths({ ...tls, secrets: { keyEnv: 'ROOT_TOKEN' } }, { ROOT_TOKEN: 'ab'.repeat(32) }), ['secrets.keyEnv'], "an admin key's tokenEnv");
  assert.deepEqual(paths({ ...base(), listen: { port: 8080, host: '127.0.0.1', tls: { port: 8080 } } }), ['listen.tls.port']);
  assert.deepEqual(paths({ ...base(), listen: { port: 8080, tls: { port: 9180 } } }), ['admin.listen']);
});

test('requestId.header: a header of its own; one that frames, routes or authenticates requests is refused', () => {
  for (const header of ['Content-Length', 'host', 'transfer-encoding', 'connection', 'x-forwarded-for', 'authorization', 'traceparent']) {
    assert.deepEqual(paths({ ...base(), requestId: { header } }), ['requestId.header'], header);
  }
  const { loaded } = load({ ...base(), requestId: { header: 'X-Correlation-Id' } });
  assert.equal(loaded.ok, true, JSON.stringify(loaded.errors));
});

test('postgres:// and redis: no password in worker.json, in the URL or its query; a bad schema name is refused', () => {
  const ok = (volume: string, redis?: Record<string, Json>) => load({ ...base(), volume, ...(redis ? { redis } : {}) }).loaded.ok;
  assert.equal(ok('postgres://gw@db.internal:5432/gateway?schema=prod', { url: 'redis://redis.internal:6379/2', passwordEnv: 'REDIS_PASSWORD' }), true);
  assert.deepEqual(paths({ ...base(), volume: 'postgres://gw:hunter2@db/gateway' }), ['volume']);
  assert.deepEqual(paths({ ...base(), volume: 'postgres://gw@db/gateway?password=hunter2' }), ['volume']);
  assert.deepEqual(paths({ ...base(), volume: 'postgres://gw@db/gateway?schema=Robert;drop' }), ['volume']);
  for (const url of ['redis://:hunter2@redis:6379', 'redis://redis.internal?password=hunter2', 'redis://u:p@redis', 'http://redis:6379']) {
    assert.deepEqual(paths({ ...base(), redis: { url } }), ['redis.url'], url);
  }
});

test('readiness: storeTimeoutMs 1000 by default (50..30000); dataPath absent by default, and only a path already in normal form', () => {
  const c = load(base()).loaded.config!;
  assert.deepEqual(c.readiness, { storeTimeoutMs: 1_000 });
  for (const dataPath of ['/readyz', '/_switchyard/ready', '/a.b/c~d-e']) {
    const { loaded } = load({ ...base(), readiness: { dataPath, storeTimeoutMs: 250 } });
    assert.equal(loaded.ok, true, `${dataPath}: ${JSON.stringify(loaded.errors)}`);
    assert.deepEqual(loaded.config!.readiness, { dataPath, storeTimeoutMs: 250 });
  }
  // Each would never equal a routed path (not normal form), or is not a path at all.
  for (const dataPath of ['/', 'readyz', '/readyz/', '//readyz', '/a//b', '/./x', '/x/..', '/ready?z', '/ready%7A', '/a\\b', '/a b', `/${'x'.repeat(300)}`]) {
    assert.deepEqual(paths({ ...base(), readiness: { dataPath } }), ['readiness.dataPath'], dataPath);
  }
  assert.deepEqual(paths({ ...base(), readiness: { storeTimeoutMs: 10 } }), ['readiness.storeTimeoutMs']);
  assert.deepEqual(paths({ ...base(), readiness: { dataPath: '/readyz', path: '/x' } }), ['readiness.path']);
});

test('admin.oidc: defaults filled in; the secret from the environment only; every field checked at its path', () => {
  const oidc = (extra: Record<string, Json> = {}): Record<string, Json> => {
    const c = base();
    (c.admin as Record<string, Json>).oidc = {
      issuer: 'https://login.example.com',
      clientId: 'console',
      clientSecretEnv: 'OIDC_SECRET',
      publicUrl: 'https://admin.example.com',
      mappings: [{ claim: 'groups', value: 'ops', scopes: ['*'], tenant: null }],
      ...extra,
    };
    return c;
  };
  const env = { ...ENV, OIDC_SECRET: 'shh' };
  const { loaded } = load(oidc(), env);
  assert.equal(loaded.ok, true, JSON.stringify(loaded.errors));
  const o = loaded.config!.admin.oidc!;
  assert.deepEqual([o.scopes, o.sessionSeconds, o.maxSessions, o.providerLogout], [['openid', 'email'], 28_800, 1_000, false]);

  assert.deepEqual(paths(oidc(), ENV), ['admin.oidc.clientSecretEnv'], 'unset secret: a bootstrap error');
  assert.deepEqual(paths(oidc({ clientSecretEnv: 'ROOT_TOKEN' }), { ...ENV }), ['admin.oidc.clientSecretEnv'], "an admin key's tokenEnv");
  assert.deepEqual(paths(oidc({ issuer: 'http://login.example.com' }), env), ['admin.oidc.issuer'], 'http only to loopback');
  assert.equal(load(oidc({ issuer: 'http://127.0.0.1:4000', publicUrl: 'http://[::1]:9180' }), env).loaded.ok, true);
  assert.deepEqual(paths(oidc({ publicUrl: 'https://admin.example.com/console' }), env), ['admin.oidc.publicUrl']);
  assert.deepEqual(paths(oidc({ scopes: ['email'] }), env), ['admin.oidc.scopes']);
  assert.deepEqual(paths(oidc({ sessionSeconds: 30 }), env), ['admin.oidc.sessionSeconds']);
  assert.deepEqual(paths(oidc({ mappings: [] }), env), ['admin.oidc.mappings']);
  assert.deepEqual(paths(oidc({ clientSecret: 'inline' }), env), ['admin.oidc.clientSecret'], 'no secret in the file');
  assert.deepEqual(
    paths(oidc({ mappings: [{ claim: 'groups', value: 'x', scopes: ['cfg:read'], tenant: 'sys' }] }), env),
    ['admin.oidc.mappings.0.tenant', 'admin.oidc.mappings.0.scopes.0'],
  );

  // Browsers send cookies to every port of a host: a publicUrl on an address the data port answers on
  // puts the console's session cookie on tenants' requests.
  const shared = /admin\.oidc\.publicUrl: the data port also answers on/;
  const warned = (c: Record<string, Json>): boolean => load(c, env).loaded.warnings.some((w) => shared.test(w));
  assert.equal(warned(oidc()), false, 'a host name: no warning');
  assert.equal(warned(oidc({ publicUrl: 'http://127.0.0.1:9180' })), true, 'data port on 0.0.0.0 answers on 127.0.0.1');
  assert.equal(warned(oidc({ publicUrl: 'http://[::1]:9180' })), true, 'an IPv6 literal too');
  const ownAddress = oidc({ publicUrl: 'http://127.0.0.1:9180' });
  (ownAddress.listen as Record<string, Json>).host = '127.0.0.2';
  assert.equal(warned(ownAddress), false, 'the data port on another address');
  (ownAddress.listen as Record<string, Json>).host = '127.0.0.1';
  assert.equal(warned(ownAddress), true, 'the data port on that same address');
});

test('discovery.resolvers: IP addresses with or without a port; anything else refused at its path', () => {
  const ok = load({ ...base(), discovery: { resolvers: ['10.0.0.2', '127.0.0.1:5353', '[::1]:53', '::1'] } }).loaded;
  assert.equal(ok.ok, true, JSON.stringify(ok.errors));
  assert.deepEqual(ok.config!.discovery.resolvers, ['10.0.0.2', '127.0.0.1:5353', '[::1]:53', '::1']);
  assert.equal(load(base()).loaded.config!.discovery.resolvers, undefined, 'absent: the system resolver');
  assert.deepEqual(paths({ ...base(), discovery: { resolvers: ['dns.example:53'] } }), ['discovery.resolvers.0']);
  assert.deepEqual(paths({ ...base(), discovery: { resolvers: ['127.0.0.1:70000'] } }), ['discovery.resolvers.0']);
  assert.deepEqual(paths({ ...base(), discovery: { resolvers: [] } }), ['discovery.resolvers']);
  assert.deepEqual(paths({ ...base(), discovery: { servers: ['127.0.0.1'] } }), ['discovery.servers']);
});
