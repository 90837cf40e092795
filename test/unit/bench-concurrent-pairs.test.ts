import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error: the bench is plain JavaScript without type declarations
import { concurrentPairsOf, concurrentRatios } from '../../bench/concurrent-pairs.mjs';

type Ratio = { value: number | null; pass: boolean | null; target: number | null };

const target = (key: string) => ({ key, label: key, url: `http://127.0.0.1/${key}`, pid: 1 });
const round = (perCpu: number | null) => ({ perCpu, rps: 1, a: {}, b: {} });

test('the control pair, which has no target, neither passes nor fails; a pair with a target does one or the other', () => {
  const pairs = concurrentPairsOf(['observeOff', 'observeOffTwin', 'observeAccessLog'].map(target)) as { key: string; target: number | null }[];
  assert.deepEqual(pairs.map((p) => [p.key, p.target]), [
    ['observeOffTwinVsOffConcurrent', null],
    ['observeAccessLogVsOffConcurrent', 0.9],
  ]);
  const rounds = { observeOffTwinVsOffConcurrent: [round(0.94), round(0.96), round(0.95)], observeAccessLogVsOffConcurrent: [round(0.86), round(0.92), round(0.95)] };
  const ratios = concurrentRatios(pairs, rounds) as Record<string, Ratio>;
  assert.deepEqual([ratios.observeOffTwinVsOffConcurrent!.value, ratios.observeOffTwinVsOffConcurrent!.pass], [0.95, null]);
  assert.deepEqual([ratios.observeAccessLogVsOffConcurrent!.value, ratios.observeAccessLogVsOffConcurrent!.pass], [0.92, true]);
  const unread = concurrentRatios(pairs, { ...rounds, observeAccessLogVsOffConcurrent: [round(0.9), round(null)] }) as Record<string, Ratio>;
  assert.deepEqual([unread.observeAccessLogVsOffConcurrent!.value, unread.observeAccessLogVsOffConcurrent!.pass], [null, null], 'without /proc there is no figure');
});

test('with both nginx targets measured, their access log pair is loaded at once too, as a reference without a target', () => {
  const keys = (ts: string[]) => (concurrentPairsOf(ts.map(target)) as { key: string; target: number | null }[]).map((p) => [p.key, p.target]);
  assert.deepEqual(keys(['nginx', 'nginxAccessLog', 'observeOff', 'observeDefaults']), [
    ['observeDefaultsVsOffConcurrent', 0.95],
    ['nginxAccessLogVsNginxConcurrent', null],
  ]);
  assert.deepEqual(keys(['nginx', 'observeOff', 'observeDefaults']), [['observeDefaultsVsOffConcurrent', 0.95]], 'without the logged nginx there is no pair');
});
