import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VOLUME_KINDS, freshVolume } from '../helpers/volumes.js';
import { GenerationRepo } from '../../src/store/generation-repo.js';
import type { EntityRow } from '../../src/contracts/entities.js';

for (const kind of VOLUME_KINDS) {
  test(`only the latest generation keeps its compiled payload; every generation keeps what a rollback needs [${kind}]`, async (t) => {
    // Regression: every publish kept a whole compiled generation on the volume (and in RAM
    // on a memory: volume), though only the latest one is ever loaded.
    const v = await freshVolume(t, kind);
    const repo = new GenerationRepo(v.db);
    const published = (n: number) => [{ tenant: 'default', kind: 'cluster', name: `c${n}` }] as unknown as EntityRow[];
    for (let id = 1; id <= 3; id++) {
      await repo.insert({ id, tenant: 'default', action: 'publish', planned: [`cluster/c${id}`], payload: { generation: id, big: 'x'.repeat(1000) }, published: published(id) });
    }
    const rows = (await v.db.prepare('SELECT id, payload FROM generation ORDER BY id').all()) as { id: number; payload: string }[];
    assert.deepEqual(
      rows.map((r) => [r.id, r.payload === 'null']),
      [
        [1, true],
        [2, true],
        [3, false],
      ],
    );
    assert.deepEqual(await repo.latest(), { id: 3, payload: { generation: 3, big: 'x'.repeat(1000) } });
    assert.deepEqual(await repo.tenantState('default', 1), published(1), 'the published state of an old generation stays for rollback');
    assert.equal((await repo.history('default')).length, 3);
  });

  test(`each tenant keeps its newest history.keep generations; older ones are pruned and reported as such [${kind}]`, async (t) => {
    const v = await freshVolume(t, kind);
    const repo = new GenerationRepo(v.db, 3);
    const state = [{ tenant: 'a', kind: 'cluster', name: 'c', doc: { big: 'x'.repeat(1000) } }] as unknown as EntityRow[];
    let id = 0;
    for (let i = 0; i < 10; i++) {
      await repo.insert({ id: ++id, tenant: 'a', action: 'publish', planned: ['cluster/c'], payload: { id }, published: state });
      if (i < 2) await repo.insert({ id: ++id, tenant: 'b', action: 'publish', planned: ['cluster/c'], payload: { id }, published: state });
    }
    assert.deepEqual((await repo.history('a')).map((g) => g.generation), [12, 11, 10]);
    assert.deepEqual((await repo.history('b')).map((g) => g.generation), [4, 2], "another tenant's publishes prune nothing of b");
    assert.equal(await repo.tenantState('a', 5), null);
    assert.equal(await repo.pruned('a', 5), true);
    assert.equal(await repo.pruned('a', 10), false);
    assert.equal(await repo.pruned('b', 1), false, 'b has fewer than keep generations: nothing of it was pruned');
    assert.deepEqual(await repo.latest(), { id: 12, payload: { id: 12 } });
  });
}
