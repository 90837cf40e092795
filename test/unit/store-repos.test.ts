import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VOLUME_KINDS, freshVolume } from '../helpers/volumes.js';
import { EntityRepo } from '../../src/store/entity-repo.js';
import { AuditRepo } from '../../src/store/audit-repo.js';
import { PluginRepo } from '../../src/store/plugin-repo.js';
import type { EntityRow } from '../../src/contracts/entities.js';

for (const kind of VOLUME_KINDS) {
  test(`drafts, staged removals, usage and publishing read the same on every volume [${kind}]`, (t) => {
    const e = new EntityRepo(freshVolume(t, kind).db);
    e.setDraft('acme', 'route', 'a', { pathPrefix: '/a' }, 1000);
    e.setDraft('acme', 'cluster', 'c', { targets: ['127.0.0.1:1'] }, 1000);
    e.setDraft('other', 'route', 'x', { pathPrefix: '/x' }, 1000);
    assert.deepEqual(e.usage('acme', 'route', 'a'), { others: { entities: 1, bytes: 27 }, self: 19 });
    const read = e.drafts('acme');
    const rows: EntityRow[] = read.map((d) => ({ tenant: 'acme', kind: d.kind, name: d.name, doc: d.doc }));
    // Written after the publish read the drafts (another node, on a shared store): it stays a draft.
    e.setDraft('acme', 'route', 'late', { pathPrefix: '/late' }, 1500);
    e.replacePublished('acme', rows, new Set(['route/a', 'cluster/c']), 7, read);
    assert.deepEqual(e.drafts('acme').map((d) => [d.name, d.doc]), [['late', { pathPrefix: '/late' }]]);
    assert.ok(e.stageDelete('acme', 'route', 'late', 1600), 'dropped again, never published');
    assert.deepEqual(e.get('acme', 'route', 'a'), { tenant: 'acme', kind: 'route', name: 'a', state: 'published', pending: null, draft: null, published: { doc: { pathPrefix: '/a' }, generation: 7 } });
    assert.equal(e.published('acme').length, 2);
    assert.equal(e.published().length, 2, "the other tenant's draft is not published");
    assert.ok(e.stageDelete('acme', 'route', 'a', 2000));
    assert.equal(e.get('acme', 'route', 'a')?.pending, 'delete');
    e.setDraft('acme', 'route', 'new', { pathPrefix: '/n' }, 3000);
    assert.ok(e.stageDelete('acme', 'route', 'new', 3000), 'a draft never published is dropped');
    assert.equal(e.get('acme', 'route', 'new'), null);
    assert.deepEqual(e.list('acme', 'route').map((v) => [v.name, v.state, v.pending]), [['a', 'draft', 'delete']]);
  });

  test(`a transaction that throws leaves nothing, nested ones roll back to their savepoint [${kind}]`, (t) => {
    const v = freshVolume(t, kind);
    const e = new EntityRepo(v.db);
    assert.throws(() => v.db.transaction(() => {
      e.setDraft('acme', 'route', 'gone', {});
      throw new Error('undo');
    })(), /undo/);
    v.db.transaction(() => {
      e.setDraft('acme', 'route', 'kept', {});
      assert.throws(() => v.db.transaction(() => {
        e.setDraft('acme', 'route', 'inner', {});
        throw new Error('inner');
      })(), /inner/);
    })();
    assert.deepEqual(e.drafts('acme').map((d) => d.name), ['kept']);
  });

  test(`the audit trail appends with increasing ids, pages newest first, and records a changed status [${kind}]`, (t) => {
    const a = new AuditRepo(freshVolume(t, kind).db);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(a.append({ at: 1_700_000_000_000 + i, identityId: 'root', identityKind: 'system', tenant: 'acme', operation: 'config.set', target: `route/r${i}`, status: 200, traceId: `t${i}`, generation: null }));
    }
    assert.deepEqual([...ids].sort((x, y) => x - y), ids, 'ids increase');
    a.setStatus(ids[4]!, 503);
    const page = a.list('acme', 2, null);
    assert.deepEqual(page.map((r) => [r.target, r.status, r.at]), [['route/r4', 503, 1_700_000_000_004], ['route/r3', 200, 1_700_000_000_003]]);
    assert.deepEqual(a.list('acme', 10, page[1]!.id).map((r) => r.target), ['route/r2', 'route/r1', 'route/r0']);
  });

  test(`plugins are enabled until disabled, per tenant [${kind}]`, (t) => {
    const p = new PluginRepo(freshVolume(t, kind).db);
    p.setEnabled('acme', 'cache', false);
    p.setEnabled('acme', 'echo', false);
    p.setEnabled('acme', 'echo', true);
    p.setEnabled('beta', 'mirror', false);
    assert.deepEqual([...p.disabled('acme')], ['cache']);
    assert.deepEqual(p.allDisabled(), { acme: ['cache'], beta: ['mirror'] });
  });
}
