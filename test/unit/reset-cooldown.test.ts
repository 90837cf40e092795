import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResetCooldown } from '../../src/worker/engine/node/reset-cooldown.js';
import { sleep } from '../helpers/wait.js';

test('an address that tripped the rapid-reset guard is refused until its cooldown ends; other addresses never', async () => {
  const c = new ResetCooldown(200);
  assert.equal(c.refuses('10.0.0.1'), false);
  c.begin('10.0.0.1');
  assert.equal(c.refuses('10.0.0.1'), true);
  assert.equal(c.refuses('10.0.0.2'), false);
  assert.equal(c.refuses(undefined), false);
  await sleep(250);
  assert.equal(c.refuses('10.0.0.1'), false, 'still refused after the cooldown');
});

test('a cooldown of 0 refuses no one', () => {
  const c = new ResetCooldown(0);
  c.begin('10.0.0.1');
  assert.equal(c.refuses('10.0.0.1'), false);
});

test('a spray of addresses is bounded: past 10,000 the oldest is forgotten, the newest kept', () => {
  const c = new ResetCooldown(60_000);
  for (let i = 0; i < 10_001; i++) c.begin(`fd00:${i.toString(16)}::1`); // each in a /64 of its own
  assert.equal(c.refuses('fd00:0::1'), false, 'the oldest was kept past the bound');
  assert.equal(c.refuses('fd00:1::1'), true);
  assert.equal(c.refuses(`fd00:${(10_000).toString(16)}::1`), true);
});

test('an IPv6 client is kept by its /64: the next address in the block is refused too, another block is not; IPv4-mapped addresses stay whole', () => {
  const c = new ResetCooldown(60_000);
  c.begin('2001:db8:1:2::1');
  assert.equal(c.refuses('2001:db8:1:2::ffff'), true);
  assert.equal(c.refuses('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), true);
  assert.equal(c.refuses('2001:db8:1:3::1'), false);
  c.begin('::ffff:10.0.0.1');
  assert.equal(c.refuses('::ffff:10.0.0.1'), true);
  assert.equal(c.refuses('::ffff:10.0.0.2'), false);
});
