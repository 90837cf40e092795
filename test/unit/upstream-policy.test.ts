import { test } from 'node:test';
import assert from 'node:assert/strict';
import { upstreamPolicy, type UpstreamRules } from '../../src/shared/upstream-policy.js';
import { urlHostPort } from '../../src/shared/host-port.js';
import { canonicalIp } from '../../src/shared/cidr.js';
import { compile } from '../../src/compiler/compile.js';
import type { DraftRow } from '../../src/contracts/entities.js';

const rules = (over: Partial<UpstreamRules> = {}): UpstreamRules => ({
  allow: [],
  deny: [],
  tenants: {},
  admin: { host: '127.0.0.1', port: 9180 },
  data: { host: '0.0.0.0', port: 9080 },
  ...over,
});

test('tenants other than default are refused loopback, private, link-local, unspecified, multicast and reserved ranges', () => {
  const acme = upstreamPolicy(rules())('acme');
  const refused = ['127.0.0.1', '127.9.9.9', '::1', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '169.254.169.254', '0.0.0.0', '::', 'fe80::1', 'fd00::1', 'fc00::1', '224.0.0.1', 'ff02::1', '255.255.255.255'];
  for (const ip of refused) assert.notEqual(acme(ip, 80), null, `${ip} refused`);
  for (const ip of ['8.8.8.8', '172.32.0.1', '192.169.0.1', '100.128.0.1', '2001:db8::1', '1.1.1.1']) assert.equal(acme(ip, 80), null, `${ip} allowed`);
  assert.match(acme('169.254.169.254', 80)!, /link-local/);
});

test('IPv4-mapped IPv6 addresses in any spelling are the IPv4 address they reach', () => {
  assert.equal(canonicalIp('::ffff:7f00:1'), '127.0.0.1');
  assert.equal(canonicalIp('0:0:0:0:0:ffff:127.0.0.1'), '127.0.0.1');
  assert.equal(canonicalIp('::FFFF:A9FE:A9FE'), '169.254.169.254');
  assert.equal(canonicalIp('fe80::1%eth0'), 'fe80::1');
  assert.equal(canonicalIp('not-an-ip'), null);
  const acme = upstreamPolicy(rules())('acme');
  assert.match(acme('::ffff:7f00:1', 80)!, /loopback/);
  assert.match(acme('[::ffff:169.254.169.254]', 80)!, /link-local/);
});

test('default keeps loopback and private upstreams, but never the admin or the data port', () => {
  const def = upstreamPolicy(rules())('default');
  for (const ip of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '::1']) assert.equal(def(ip, 80), null, ip);
  for (const ip of ['127.0.0.1', '127.0.0.2', '::1', '0.0.0.0', '::ffff:127.0.0.1']) {
    assert.match(def(ip, 9180)!, /admin port/, `${ip}:9180`);
    assert.match(def(ip, 9080)!, /data port/, `${ip}:9080`);
  }
  // The admin port bound to one address: the same port elsewhere is another service.
  assert.equal(def('10.1.2.3', 9180), null);
  assert.equal(def('10.1.2.3', 9080), null, 'a data port on 0.0.0.0: the same port on another host is another service');
  // Regression: a data port on 0.0.0.0 answers on the host's own addresses too: a route to one proxied to itself.
  const withLocal = upstreamPolicy(rules({ local: ['192.0.2.2', 'fe80::1'] }))('default');
  assert.match(withLocal('192.0.2.2', 9080)!, /data port/);
  assert.match(withLocal('fe80::1', 9080)!, /data port/);
  assert.equal(withLocal('192.0.2.3', 9080), null);
  const acme = upstreamPolicy(rules({ allow: ['0.0.0.0/0', '::/0'] }))('acme');
  for (const ip of ['::7f00:1', '64:ff9b::7f00:1']) assert.equal(upstreamPolicy(rules())('acme')(ip, 80) !== null, true, `${ip}: IPv4-compatible and NAT64 forms are refused by default`);
  assert.equal(acme('64:ff9b::7f00:1', 80), null, 'unless allowed');
});

test('an admin port on a wildcard address is refused on every address', () => {
  const check = upstreamPolicy(rules({ admin: { host: '0.0.0.0', port: 9180 }, allow: ['0.0.0.0/0'] }));
  assert.match(check('default')('203.0.113.5', 9180)!, /admin port/);
  assert.equal(check('default')('203.0.113.5', 9181), null);
});

test('an admin port on a private address is refused there and on loopback', () => {
  const def = upstreamPolicy(rules({ admin: { host: '10.0.0.5', port: 9180 } }))('default');
  assert.match(def('10.0.0.5', 9180)!, /admin port \(10\.0\.0\.5:9180\)/);
  assert.match(def('127.0.0.1', 9180)!, /admin port/);
  assert.equal(def('10.0.0.6', 9180), null);
});

test('allow opens a range to every tenant; deny closes one to every tenant and wins over allow; the admin port stays closed', () => {
  const p = upstreamPolicy(rules({ allow: ['127.0.0.1/32', '10.0.0.0/8'], deny: ['10.9.0.0/16'] }));
  assert.equal(p('acme')('127.0.0.1', 8080), null);
  assert.notEqual(p('acme')('127.0.0.2', 8080), null, 'only the allowed block');
  assert.equal(p('acme')('10.1.1.1', 80), null);
  assert.equal(p('acme')('10.9.1.1', 80), 'upstreams.deny 10.9.0.0/16');
  assert.equal(p('default')('10.9.1.1', 80), 'upstreams.deny 10.9.0.0/16');
  assert.match(p('acme')('127.0.0.1', 9180)!, /admin port/);
});

test('per-tenant lists add to the shared ones for that tenant only', () => {
  const p = upstreamPolicy(rules({ tenants: { acme: { allow: ['127.0.0.0/8'], deny: [] }, beta: { allow: [], deny: ['203.0.113.0/24'] } } }));
  assert.equal(p('acme')('127.0.0.1', 80), null);
  assert.notEqual(p('beta')('127.0.0.1', 80), null);
  assert.equal(p('beta')('203.0.113.9', 80), 'upstreams.deny 203.0.113.0/24');
  assert.equal(p('acme')('203.0.113.9', 80), null);
});

test('targets are read as undici connects: numeric IPv4 spellings are addresses', () => {
  assert.deepEqual(urlHostPort('127.1:22'), { host: '127.0.0.1', port: 22 });
  assert.deepEqual(urlHostPort('2130706433:80'), { host: '127.0.0.1', port: 80 });
  assert.deepEqual(urlHostPort('[::1]:8080'), { host: '::1', port: 8080 });
  assert.deepEqual(urlHostPort('api.example.com:443'), { host: 'api.example.com', port: 443 });
});

test('the compiler refuses literal targets and service URLs of the publishing tenant, with the rule and a pointer', () => {
  const drafts: DraftRow[] = [
    { kind: 'cluster', name: 'c', doc: { targets: ['8.8.8.8:80', '127.0.0.1:22', 'api.example.com:80', '127.1:9180'] } },
    { kind: 'route', name: 'r', doc: { hosts: ['acme.example'], cluster: 'c', steps: [{ code: 'forward-auth', settings: { url: 'http://169.254.169.254/latest' } }] } },
  ];
  const r = compile({ tenant: 'acme', published: [], drafts, upstreams: rules() });
  assert.equal(r.ok, false);
  const issues = r.issues.map((i) => `${i.kind}/${i.name} ${i.pointer} ${i.code}`).sort();
  assert.deepEqual(issues, [
    'cluster/c /targets/1 Compile.Cluster.TargetDenied',
    'cluster/c /targets/3 Compile.Cluster.TargetDenied',
    'route/r /steps/0/settings/url Compile.Step.UrlDenied',
  ]);
  assert.match(r.issues.find((i) => i.pointer === '/targets/3')!.message, /admin port/);
  assert.match(r.issues.find((i) => i.pointer === '/targets/1')!.message, /loopback 127\.0\.0\.0\/8/);
  // The same documents in default: only the admin port.
  const d = compile({ tenant: 'default', published: [], drafts, upstreams: rules() });
  assert.deepEqual(d.issues.map((i) => i.pointer), ['/targets/3']);
  // Without a policy (unit callers), nothing is refused.
  assert.equal(compile({ tenant: 'acme', published: [], drafts }).ok, true);
});
