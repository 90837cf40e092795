import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./helpers/late-upgrades.ts', import.meta.url));
const COUNT = 200;

function run(mode: string): { codes: Record<string, number>; requestIds: number; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, mode, String(COUNT)], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return { ...(JSON.parse(r.stdout) as { codes: Record<string, number>; requestIds: number }), stderr: r.stderr };
}

test('a handshake completed after the request callback (upgradeLater) keeps its socket: 200 of 200 close with 1000, each 101 carries its extra header, uWS prints no warning', () => {
  const { codes, requestIds, stderr } = run('adapter');
  assert.deepEqual(codes, { 1000: COUNT });
  assert.equal(requestIds, COUNT);
  assert.doesNotMatch(stderr, /corked callback/);
});

test('control: the same handshakes upgraded inside res.cork() are shut at once (uWS reads the freed HTTP state), so the test above can fail', () => {
  const { codes } = run('corked');
  assert.ok((codes['1006'] ?? 0) > COUNT / 2, `abnormal closes: ${JSON.stringify(codes)}`);
});
