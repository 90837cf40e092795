import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openVolume } from '../../src/store/volume.js';
import { GenerationRepo } from '../../src/store/generation-repo.js';
import type { EntityRow } from '../../src/compiler/snapshot.js';

test('only the latest generation keeps its compiled payload; every generation keeps what a rollback needs', (t) => {
  // Regression: every publish kept a whole compiled generation on the volume (and in RAM
  // on a memory: volume), though only the latest one is ever loaded.
  const v = openVolume('memory:', '/');
  t.after(() => v.close());
  const repo = new GenerationRepo(v.db);
  const published = (n: number) => [{ tenant: 'default', kind: 'cluster', name: `c${n}` }] as unknown as EntityRow[];
  for (let id = 1; id <= 3; id++) {
    repo.insert({ id, tenant: 'default', action: 'publish', planned: [`cluster/c${id}`], payload: { generation: id, big: 'x'.repeat(1000) }, published: published(id) });
  }
  const rows = v.db.prepare('SELECT id, payload FROM generation ORDER BY id').all() as { id: number; payload: string }[];
  assert.deepEqual(
    rows.map((r) => [r.id, r.payload === 'null']),
    [
      [1, true],
      [2, true],
      [3, false],
    ],
  );
  assert.deepEqual(repo.latest(), { id: 3, payload: { generation: 3, big: 'x'.repeat(1000) } });
  assert.deepEqual(repo.tenantState('default', 1), published(1), 'the published state of an old generation stays for rollback');
  assert.equal(repo.history('default').length, 3);
});
