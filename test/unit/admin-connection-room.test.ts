import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admitCap, CAP_FLOOR, CAP_SPARE, countOpenDescriptors, parseOpenFilesLimit, readOpenFilesLimit, reservedDescriptors } from '../../src/admin/descriptor-room.js';
import { headDeadlineMs, MIN_HEAD_DEADLINE_MS } from '../../src/admin/head-deadline.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`;

test('the soft open-files limit is read from /proc/<pid>/limits; unlimited or absent is null', () => {
  assert.equal(parseOpenFilesLimit(LIMITS), 1024);
  assert.equal(parseOpenFilesLimit(LIMITS.replace('1024  ', 'unlimited')), null);
  assert.equal(parseOpenFilesLimit('Max cpu time unlimited unlimited seconds\n'), null);
});

test("this process's descriptors are read from /proc: the limit and a count of at least stdin, stdout, stderr", () => {
  const limit = readOpenFilesLimit();
  const open = countOpenDescriptors();
  assert.ok(limit !== null && open !== null, 'Linux has /proc');
  assert.ok(limit >= 3 && open >= 3 && open <= limit, JSON.stringify({ limit, open }));
});

test('the admin cap leaves the non-admin descriptors and the reserve under the limit, never above the configured cap nor past the free descriptors', () => {
  assert.equal(reservedDescriptors(1024), 128);
  assert.equal(reservedDescriptors(256), 64);
  // 1,024 descriptors, 30 open that are not admin connections, 128 reserved.
  assert.equal(admitCap(1_024, 1024, 30), 1024 - 30 - 128);
  assert.equal(admitCap(500, 1_048_576, 30), 500, 'a high limit leaves the configured cap');
  assert.equal(admitCap(1_024, 1024, 870), 1024 - 870 - 128, 'the reserve kept while the cap is at least the floor');
  assert.equal(admitCap(1_024, 1024, 900), CAP_FLOOR, 'under the floor: the floor, taken from the reserve');
  assert.equal(admitCap(1_024, 200, 190), 10 - CAP_SPARE, 'never more than the free descriptors less the spare');
  assert.equal(admitCap(1_024, 200, 200), 1, 'no descriptor free: one connection, every other refused or evicted for');
  assert.equal(admitCap(20, 64, 30), CAP_FLOOR, 'the floor never above the free descriptors less the spare (34 - 8)');
  assert.equal(admitCap(8, 1024, 1000), 8, 'the floor never above the configured cap');
  assert.equal(admitCap(1_024, null, 30), 1_024, 'no /proc, or unlimited: the configured cap alone');
  for (let others = 0; others <= 1024; others++) {
    const cap = admitCap(1_024, 1024, others);
    assert.ok(cap === 1 || cap + CAP_SPARE <= 1024 - others, `with ${others} other descriptors the cap ${cap} leaves the spare`);
  }
});

test('the head deadline is the full one up to half the cap, then shrinks to 1 s at the cap', () => {
  assert.equal(headDeadlineMs(0, 10_000), 10_000);
  assert.equal(headDeadlineMs(0.5, 10_000), 10_000);
  assert.equal(headDeadlineMs(0.75, 10_000), 5_000);
  assert.equal(headDeadlineMs(0.9, 10_000), 2_000);
  assert.equal(headDeadlineMs(1, 10_000), MIN_HEAD_DEADLINE_MS);
  assert.equal(headDeadlineMs(1.2, 10_000), MIN_HEAD_DEADLINE_MS, 'over the cap (connections still closing)');
  assert.equal(headDeadlineMs(0.9, 500), 500, 'never longer than the full deadline');
});
