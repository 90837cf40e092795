import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile } from '../../src/compiler/compile.js';
import { RouteTable, routingHost } from '../../src/shared/route-table.js';
import type { DraftRow, EntityRow } from '../../src/contracts/entities.js';

function table(drafts: DraftRow[], published: EntityRow[] = [], tenant = 'default') {
  const r = compile({ tenant, published, drafts });
  assert.ok(r.ok, JSON.stringify(r.issues));
  return new RouteTable(r.generation, (route) => route.name);
}
const direct = (name: string, extra: Record<string, unknown> = {}): DraftRow => ({ kind: 'route', name, doc: { directResponse: { statusCode: 200 }, ...extra } });

test('higher order wins over a longer prefix; a route without prefix is a catch-all', () => {
  const t = table([direct('all'), direct('api', { pathPrefix: '/api' }), direct('apiv2', { pathPrefix: '/api/v2', order: -1 }), direct('boost', { pathPrefix: '/a', order: 5 })]);
  assert.equal(t.lookup('GET', '', '/api/v2/x'), 'boost');
  assert.equal(t.lookup('GET', '', '/zzz'), 'all');
  const t2 = table([direct('all'), direct('api', { pathPrefix: '/api' }), direct('apiv2', { pathPrefix: '/api/v2' })]);
  assert.equal(t2.lookup('GET', '', '/api/v2/x'), 'apiv2');
  assert.equal(t2.lookup('GET', '', '/api/v1'), 'api');
  assert.equal(t2.lookup('GET', '', '/'), 'all');
});

test('prefixes are plain string prefixes and no match gives null', () => {
  const t = table([direct('api', { pathPrefix: '/api' })]);
  assert.equal(t.lookup('GET', '', '/apix'), 'api');
  assert.equal(t.lookup('GET', '', '/ap'), null);
});

test('methods and hosts conditions', () => {
  const t = table([
    direct('post', { pathPrefix: '/x', methods: ['POST'], order: 2 }),
    direct('host', { pathPrefix: '/x', hosts: ['a.example', '*.wild.example'], order: 1 }),
    direct('any', { pathPrefix: '/x' }),
  ]);
  assert.equal(t.lookup('POST', '', '/x'), 'post');
  assert.equal(t.lookup('GET', 'a.example', '/x'), 'host');
  assert.equal(t.lookup('GET', 'b.wild.example', '/x'), 'host');
  assert.equal(t.lookup('GET', 'wild.example', '/x'), 'any');
  assert.equal(t.lookup('GET', 'other', '/x'), 'any');
});

test("a claimed host only reaches its tenant's routes", () => {
  const published: EntityRow[] = [{ tenant: 'default', kind: 'route', name: 'catchall', doc: { directResponse: { statusCode: 200 }, order: 100 } }];
  const t = table([direct('acme', { hosts: ['acme.example'] })], published, 'acme');
  assert.equal(t.lookup('GET', 'acme.example', '/'), 'acme');
  assert.equal(t.lookup('GET', 'other.example', '/'), 'catchall');
});

test('lookups over 10,000 routes find the right route', () => {
  const drafts = Array.from({ length: 10_000 }, (_, i) => direct(`r${i}`, { pathPrefix: `/svc/${i}/` }));
  const t = table(drafts);
  assert.equal(t.lookup('GET', '', '/svc/9999/items'), 'r9999');
  assert.equal(t.lookup('GET', '', '/svc/123/'), 'r123');
  assert.equal(t.lookup('GET', '', '/svc/10000/'), null);
});

test('routingHost strips the port, the trailing dot and case', () => {
  assert.equal(routingHost('Example.COM:8080'), 'example.com');
  assert.equal(routingHost('example.com.'), 'example.com');
  assert.equal(routingHost('[::1]:80'), '[::1]');
  assert.equal(routingHost(undefined), '');
});

test('thousands of host-bound routes at one prefix: each host finds its own route, ranks still decide', () => {
  // Regression (cost): host-bound routes without a prefix sat in one list that every lookup
  // walked, testing each route's hosts (4,445 host checks for one lookup among 5,000
  // virtual hosts). They are now indexed by host and by wildcard suffix at each prefix.
  const drafts: DraftRow[] = [];
  for (let i = 0; i < 3000; i++) drafts.push(direct(`v${String(i).padStart(4, '0')}`, { hosts: [`site${i}.example`] }));
  drafts.push(direct('wild', { hosts: ['*.shop.example'] }), direct('deeper', { hosts: ['*.eu.shop.example'], order: 1 }));
  drafts.push(direct('zz-fallback'), direct('onlyput', { hosts: ['site7.example'], methods: ['PUT'], order: 3 }));
  const t = table(drafts);
  assert.equal(t.lookup('GET', 'site0.example', '/'), 'v0000');
  assert.equal(t.lookup('GET', 'site2999.example', '/x'), 'v2999');
  assert.equal(t.lookup('GET', 'site7.example', '/'), 'v0007');
  assert.equal(t.lookup('PUT', 'site7.example', '/'), 'onlyput', 'a better-ranked route for the same host and method');
  assert.equal(t.lookup('GET', 'a.shop.example', '/'), 'wild');
  assert.equal(t.lookup('GET', 'x.eu.shop.example', '/'), 'deeper', 'the better rank among matching wildcards');
  assert.equal(t.lookup('GET', 'shop.example', '/'), 'zz-fallback', 'a wildcard does not cover its bare suffix');
  assert.equal(t.lookup('GET', 'nobody.example', '/'), 'zz-fallback');
});

test('caseSensitive: false compares the prefix without regard to case; other routes stay case-sensitive', () => {
  const t = table([
    direct('all'),
    direct('admin', { pathPrefix: '/Admin-Api', caseSensitive: false, order: 10 }),
    direct('docs', { pathPrefix: '/docs', order: 5 }),
    direct('docsv2', { pathPrefix: '/docs/V2', caseSensitive: false, order: 1 }),
  ]);
  for (const p of ['/admin-api', '/ADMIN-API/x', '/aDmIn-ApI', '/Admin-Api']) assert.equal(t.lookup('GET', '', p), 'admin', p);
  assert.equal(t.lookup('GET', '', '/DOCS'), 'all', 'a case-sensitive prefix does not match a case variant');
  assert.equal(t.lookup('GET', '', '/docs/v2'), 'docs', 'a higher order still wins over a case-insensitive match');
  assert.equal(t.lookup('GET', '', '/DOCS/v2'), 'docsv2');
  assert.equal(t.lookup('GET', '', '/adm'), 'all');
});
