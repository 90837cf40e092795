import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionStates, HEAD_GRACE_MS } from '../../src/admin/eviction-order.js';

const T = 1_000_000;
const answer = (ended: boolean) => ({ writableEnded: ended });

/** Closes victims one by one until none is left: the order in which they went, `answered` marked with `*`. */
function drain(states: ConnectionStates<string>, now: number, spare: string | null = null): string[] {
  const order: string[] = [];
  for (let v = states.victim(now, spare); v !== null; v = states.victim(now, spare)) {
    order.push(v.answered ? `${v.key}*` : v.key);
    states.remove(v.key);
  }
  return order;
}

test('at the cap: stale heads, then idle keep-alive connections, then stuck answers, then fresh heads, then fresh answers; a call being handled never', () => {
  const s = new ConnectionStates<string>();
  const now = T + 10_000;
  const fresh = now - HEAD_GRACE_MS + 50;
  // Opened in this order; each category oldest first.
  s.opened('handling', T);
  s.called('handling', answer(false), T + 1);
  s.opened('stuck-old', T);
  s.called('stuck-old', answer(true), T + 2);
  s.opened('idle-old', T);
  s.called('idle-old', answer(true), T + 3);
  s.answered('idle-old', answer(true), T + 4); // another answer than its call's: ignored, its own is still taken
  s.opened('stale-head-old', T + 5);
  s.opened('stale-head-new', T + 6);
  s.opened('stuck-new', T + 7);
  s.called('stuck-new', answer(true), T + 8);
  s.opened('fresh-head', fresh);
  s.opened('fresh-answer', fresh);
  s.called('fresh-answer', answer(true), fresh + 1);
  const idle = answer(true);
  s.opened('idle-new', T + 9);
  s.called('idle-new', idle, T + 9);
  s.answered('idle-new', idle, T + 10);
  assert.equal(s.size, 9);
  assert.deepEqual(drain(s, now), ['stale-head-old', 'stale-head-new', 'idle-new', 'stuck-old*', 'idle-old*', 'stuck-new*', 'fresh-head', 'fresh-answer*']);
  assert.equal(s.size, 1, 'the call being handled stays');
});

test("the operator's fresh connection, accepted in one batch with a flood's, goes only once no idle or stale connection is left", () => {
  const s = new ConnectionStates<string>();
  for (let i = 0; i < 5; i++) {
    const a = answer(true);
    s.opened(`flood-${i}`, T);
    s.called(`flood-${i}`, a, T + 1);
    s.answered(`flood-${i}`, a, T + 2);
  }
  const now = T + 5_000;
  s.opened('operator', now);
  s.opened('newcomer', now);
  const victims: string[] = [];
  for (let i = 0; i < 5; i++) {
    const v = s.victim(now, 'newcomer')!;
    s.remove(v.key);
    victims.push(v.key);
  }
  assert.deepEqual(victims, ['flood-0', 'flood-1', 'flood-2', 'flood-3', 'flood-4']);
  assert.equal(s.victim(now, 'newcomer')?.key, 'operator');
  assert.equal(s.victim(now, 'operator')?.key, 'newcomer', 'the newcomer itself is spared only for its own admission');
});

test('a head past the grace is stale; the head sweep lists headless connections opened before a time, oldest first', () => {
  const s = new ConnectionStates<string>();
  s.opened('a', T);
  s.opened('b', T + 100);
  s.opened('c', T + 200);
  s.called('b', answer(false), T + 150);
  assert.deepEqual([...s.headlessSince(T + 201)], ['a', 'c']);
  assert.deepEqual([...s.headlessSince(T + 200)], ['a']);
  assert.equal(s.victim(T + HEAD_GRACE_MS - 1, null)?.key, 'a', 'a fresh head still goes when nothing else can');
  assert.equal(s.remove('a'), true);
  assert.equal(s.remove('a'), false, 'closed already');
  assert.equal(s.called('a', answer(false), T + 300), false, 'a request on a connection closed by the budget is not tracked');
});

test('pipelined calls: only the latest call’s answer makes the connection idle; every other connection in a call being handled leaves nothing to close', () => {
  const s = new ConnectionStates<string>();
  const first = answer(true);
  const second = answer(false);
  s.opened('p', T);
  s.called('p', first, T + 1);
  s.called('p', second, T + 2);
  s.answered('p', first, T + 3);
  assert.equal(s.victim(T + 10_000, null), null, 'the second call is still being handled');
  s.answered('p', second, T + 4);
  assert.deepEqual(s.victim(T + 10_000, null), { key: 'p', answered: false });
});

test('a keep-alive connection whose call authenticated goes after fresh heads: a burst of new connections cannot cut the operator’s', () => {
  const s = new ConnectionStates<string>();
  const now = T + 10_000;
  const fresh = now - HEAD_GRACE_MS + 50;
  const op = answer(true);
  s.opened('operator', T);
  s.prove('operator'); // told before its call is (the handler runs before the budget's listener)
  s.called('operator', op, T + 1);
  s.answered('operator', op, T + 2);
  const anon = answer(true);
  s.opened('healthz', T + 3);
  s.called('healthz', anon, T + 4);
  s.answered('healthz', anon, T + 5);
  s.opened('burst-1', fresh);
  s.opened('burst-2', fresh + 1);
  assert.deepEqual(drain(s, now), ['healthz', 'burst-1', 'burst-2', 'operator']);
  s.prove('gone'); // an untracked connection is not kept
  assert.equal(s.size, 0);
});
