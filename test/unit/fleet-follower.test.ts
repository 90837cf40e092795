import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshVolume } from '../helpers/volumes.js';
import { GenerationRepo } from '../../src/store/generation-repo.js';
import { FleetFollower } from '../../src/supervisor/fleet-follower.js';
import type { GenerationMessage } from '../../src/contracts/ipc.js';
import type { CompiledGeneration } from '../../src/contracts/generation.js';
import type { Logger } from '../../src/shared/logger.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} } as unknown as Logger;
const payload = { tenants: {}, clusters: {} } as unknown as CompiledGeneration;

test('regression: a generation committed while the follower serves the one before is followed at once, not at the next poll', async (t) => {
  const v = await freshVolume(t, 'postgres');
  const generations = new GenerationRepo(v.db, 10);
  const fleet = v.fleet!;
  const followed: { id: number; at: number }[] = [];
  let served = 0;
  // Serving a generation takes a while (the broadcast to workers waits for their acks).
  const publisher = {
    currentId: () => served,
    follow: async (gen: GenerationMessage) => {
      await new Promise((r) => setTimeout(r, 300));
      served = gen.id;
      followed.push({ id: gen.id, at: performance.now() });
    },
  };
  // A poll far away: only notifications can bring the generations within the test's bounds.
  const follower = new FleetFollower({ url: fleet.url, schema: fleet.schema }, publisher, '127.0.0.1:1', quiet, 60_000);
  follower.start();
  t.after(() => follower.stop());
  await new Promise((r) => setTimeout(r, 300)); // LISTEN in place (the first tick connects)

  const commit = (id: number) =>
    v.db.transaction(async () => {
      await generations.insert({ id, tenant: 'acme', action: 'publish', planned: [], payload, published: [] });
      await fleet.announce(id);
    });
  await commit(1);
  await new Promise((r) => setTimeout(r, 100)); // the follower is now serving 1
  const t2 = performance.now();
  await commit(2);
  const deadline = Date.now() + 3_000;
  while (served < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.equal(served, 2, `followed: ${JSON.stringify(followed.map((f) => f.id))}`);
  const late = followed.find((f) => f.id === 2)!.at - t2;
  assert.ok(late < 900, `generation 2 followed ${late.toFixed(0)} ms after its commit (the serving of 1 takes 300 ms)`);
});
