import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile } from '../../src/compiler/compile.js';
import { TenantPartCache } from '../../src/compiler/tenant-parts.js';
import type { EntityRow } from '../../src/contracts/entities.js';

const state = (tenants: number, routePrefix = '/p'): EntityRow[] =>
  Array.from({ length: tenants }, (_, t) => [
    { tenant: `t${t}`, kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:9'] } },
    { tenant: `t${t}`, kind: 'route', name: 'r', doc: { hosts: [`t${t}.example`], pathPrefix: `${routePrefix}${t}/`, cluster: 'c', steps: [{ code: 'request-headers', settings: { set: { 'x-a': 'b' } } }] } },
  ]).flat() as EntityRow[];

test('a compile through the tenant-part cache equals a full compile, and reuses the parts of tenants that did not change', () => {
  const cache = new TenantPartCache();
  const published = state(3);
  const first = compile({ tenant: 't0', published, drafts: [] }, cache);
  assert.ok(first.ok);
  const drafts = [{ kind: 'route' as const, name: 'r', doc: { hosts: ['t1.example'], pathPrefix: '/changed/', cluster: 'c' } }];
  const cached = compile({ tenant: 't1', published, drafts }, cache);
  assert.deepEqual(cached, compile({ tenant: 't1', published, drafts }));
  assert.ok(cached.ok);
  assert.equal(cached.generation.tenants.t0!.routes, first.generation.tenants.t0!.routes, 't0 is not recompiled');
  assert.notEqual(cached.generation.tenants.t1!.routes, first.generation.tenants.t1!.routes, 't1 is');
  assert.equal(cached.generation.tenants.t1!.routes[0]!.pathPrefix, '/changed/');
});

test('the cache does not hide what another input changes: disabled steps, and host conflicts across tenants', () => {
  const cache = new TenantPartCache();
  const published = state(2);
  assert.ok(compile({ tenant: 't0', published, drafts: [] }, cache).ok);
  const disabled = compile({ tenant: 't0', published, drafts: [], disabled: { t0: ['request-headers'] } }, cache);
  assert.equal(disabled.ok, false);
  assert.deepEqual(disabled.issues.map((i) => i.code), ['Compile.Step.Disabled']);
  const clash = compile({ tenant: 't1', published, drafts: [{ kind: 'route', name: 'r', doc: { hosts: ['t0.example'], cluster: 'c' } }] }, cache);
  assert.deepEqual(clash.issues.map((i) => i.code), ['Compile.Route.HostConflict']);
  assert.ok(compile({ tenant: 't0', published, drafts: [] }, cache).ok, 'and back to the published state');
});

test("a part cached from another tenant's publish never spares the publishing tenant its own checks", () => {
  // Regression: parts compiled without a tenant's own checks (upstream addresses) were reused on its own publish.
  const cache = new TenantPartCache();
  const published = state(2);
  const upstreams = { allow: [], deny: [], tenants: {}, admin: { host: '127.0.0.1', port: 9180 }, data: { host: '0.0.0.0', port: 8080 } };
  assert.ok(compile({ tenant: 't1', published, drafts: [] }, cache).ok, 'without a policy, t0 is compiled and cached unchecked');
  const own = compile({ tenant: 't0', published, drafts: [], upstreams }, cache);
  assert.deepEqual(own.issues.map((i) => i.code), ['Compile.Cluster.TargetDenied'], "t0's loopback target is checked on its own publish");
});
