import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSOLE_FEATURES, CONSOLE_VIEWS, consoleModel } from '../../src/admin/console-nav.js';
import { OPERATIONS } from '../../src/admin/contract.js';
import type { Identity } from '../../src/admin/identity.js';
import { masksOf } from '../../src/admin/scopes.js';

const who = (scopes: string[], tenant: string | null = null): Identity => ({
  id: 'k',
  kind: tenant ? 'tenant' : 'system',
  tenant,
  scopes,
  masks: masksOf(scopes),
});

test('every view and feature names an operation of the contract', () => {
  const ids = new Set(OPERATIONS.map((o) => o.id));
  for (const v of CONSOLE_VIEWS) assert.ok(ids.has(v.read), v.id);
  for (const f of CONSOLE_FEATURES) {
    assert.ok(ids.has(f.op), f.id);
    assert.ok(CONSOLE_VIEWS.some((v) => v.id === f.view), f.id);
  }
});

test('a * system key sees every view with every feature enabled, on the tenant it asks for', () => {
  const m = consoleModel(who(['*']), 'acme');
  assert.equal(m.tenant, 'acme');
  assert.equal(m.tenantSelectable, true);
  assert.deepEqual(m.nav.map((n) => n.id), CONSOLE_VIEWS.map((v) => v.id));
  assert.ok(Object.values(m.features).every((s) => s === 'enabled'));
});

test('config:read + publish:read: entities and publish read-only, no keys, plugins or audit, no overview', () => {
  const m = consoleModel(who(['config:read', 'publish:read']), null);
  assert.equal(m.tenant, 'default');
  assert.deepEqual(m.nav.map((n) => n.id), ['clusters', 'routes', 'chains', 'certificates', 'explain', 'publish']);
  assert.equal(m.features['config.set'], 'disabled');
  assert.equal(m.features['config.delete'], 'disabled');
  assert.equal(m.features['publish.dry-run'], 'enabled', 'dry-run is a read');
  assert.equal(m.features['publish.go'], 'disabled');
  assert.equal(m.features['key.issue'], 'hidden');
  assert.equal(m.features['plugin.toggle'], 'hidden');
  assert.equal(m.features['cluster.health'], 'disabled', 'target health is a read of its own');
  assert.equal(m.features['publish.diff'], 'enabled', 'the diff is a config read');
});

test('a tenant key: its own tenant whatever is asked, no instance-level views', () => {
  const m = consoleModel(who(['*'], 'acme'), 'other');
  assert.equal(m.tenant, 'acme');
  assert.equal(m.tenantSelectable, false);
  assert.ok(!m.nav.some((n) => n.id === 'overview'), 'overview reads cluster.status, instance-level');
  assert.deepEqual(m.nav.map((n) => n.id), ['clusters', 'routes', 'chains', 'certificates', 'explain', 'publish', 'keys', 'plugins', 'audit']);
  assert.equal(m.features['key.issue'], 'enabled');
});

test('write without read: the view is hidden, so are its controls', () => {
  const m = consoleModel(who(['key:write']), null);
  assert.ok(!m.nav.some((n) => n.id === 'keys'));
  assert.equal(m.features['key.issue'], 'hidden');
});
