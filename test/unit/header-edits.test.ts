import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestFlow } from '../../src/worker/flow.js';
import { ADD, REMOVE, SET, applyPlan, applyPlanToHead, editPlan } from '../../src/shared/header-edits.js';
import { responseHeaders } from '../../src/steps/response-headers.js';
import type { Flow, ResponseHead, StepEnv, StepRequest } from '../../src/steps/step.js';
import { freshState } from '../../src/steps/step-state.js';

function flowOf(headers: string[], owned: string[] | null = null): RequestFlow {
  const req: StepRequest = {
    method: 'GET',
    path: '/x',
    query: null,
    headers,
    remoteAddress: '127.0.0.1',
    clientAddress: '127.0.0.1',
    clientAddressTrusting: () => '127.0.0.1',
    localPort: '8080', scheme: 'http',
    requestId: '', requestIdHeader: null, setRequestId: () => {},
    header: (n) => {
      for (let i = 0; i < headers.length; i += 2) if (headers[i] === n) return headers[i + 1];
      return undefined;
    },
    headerList: (n) => req.header(n),
  };
  return new RequestFlow(req, null, owned);
}

const pairs = (flat: string[]) => {
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push(`${flat[i]}: ${flat[i + 1]}`);
  return out;
};

test('no edits: the upstream list is returned as it is', () => {
  const list = ['host', 'h', 'a', '1'];
  assert.equal(flowOf([]).applyHeaderEdits(list), list);
});

test('set replaces every client value, remove drops them, add appends to the client values', () => {
  const f = flowOf([]);
  f.setHeader('X-Set', 'new');
  f.removeHeader('x-drop');
  f.addHeader('x-add', 'a2');
  const out = f.applyHeaderEdits(['host', 'h', 'x-set', 'old1', 'x-drop', 'd', 'x-set', 'old2', 'x-add', 'a1']);
  assert.deepEqual(pairs(out), ['host: h', 'x-add: a1', 'x-add: a2', 'x-set: new']);
});

test('the last set or remove of a name wins; adds after it append, adds before it are replaced', () => {
  const f = flowOf([]);
  f.addHeader('x-a', 'before');
  f.setHeader('x-a', 'one');
  f.setHeader('x-a', 'two');
  f.addHeader('x-a', 'after');
  f.removeHeader('x-b');
  f.addHeader('x-b', 'fresh');
  f.setHeader('x-c', 'c');
  f.removeHeader('x-c');
  const out = f.applyHeaderEdits(['x-a', 'client', 'x-b', 'client', 'x-c', 'client', 'keep', 'k']);
  assert.deepEqual(pairs(out), ['keep: k', 'x-a: two', 'x-a: after', 'x-b: fresh']);
});

test('preview shows the request as the proxy would send it (edits applied, hop-by-hop dropped, X-Forwarded-* set), without consuming the edits', () => {
  // Regression: echo and mirror showed and sent the client's own X-Forwarded-Host/-Proto,
  // which the proxy replaces, and mirror copies carried a client-written X-Forwarded-For unextended.
  // (The request holds an X-Forwarded-For only from a trusted proxy: the Exchange drops an untrusted peer's.)
  const f = flowOf(['host', 'h', 'x-a', 'client', 'connection', 'x-hop', 'x-hop', '1', 'x-forwarded-host', 'evil', 'x-forwarded-port', '1', 'x-forwarded-for', '6.6.6.6']);
  f.setHeader('x-a', 'mine');
  const expected = [['host', 'h'], ['x-forwarded-for', `6.6.6.6, ${f.req.remoteAddress}`], ['x-forwarded-proto', 'http'], ['x-forwarded-host', 'h'], ['x-forwarded-port', '8080'], ['x-a', 'mine']];
  assert.deepEqual(f.preview().headers, expected);
  assert.deepEqual(f.preview().headers, expected);
});

test('editPlan on the raw triples: names to drop in first-edit order, the tail of values to append', () => {
  const plan = editPlan([ADD, 'x-a', 'early', SET, 'x-a', 'v', ADD, 'x-n', 'n', REMOVE, 'x-r', '', ADD, 'x-a', 'late']);
  assert.deepEqual(plan, { drop: ['x-a', 'x-r'], tail: ['x-n', 'n', 'x-a', 'v', 'x-a', 'late'] });
  assert.deepEqual(applyPlan(['x-a', 'c', 'x-r', 'c', 'k', '1'], plan), ['k', '1', 'x-n', 'n', 'x-a', 'v', 'x-a', 'late']);
});

test('editPlan, sets and removes of distinct names (the one-pass case): drops in edit order, set values in the tail', () => {
  assert.deepEqual(editPlan([SET, 'x-id', '1', REMOVE, 'x-api-key', '', SET, 'x-consumer', 'c']), {
    drop: ['x-id', 'x-api-key', 'x-consumer'],
    tail: ['x-id', '1', 'x-consumer', 'c'],
  });
  // A repeated name or an add leaves the one-pass case: the general rules still hold.
  assert.deepEqual(editPlan([SET, 'x-a', '1', REMOVE, 'x-b', '', SET, 'x-a', '2']), { drop: ['x-a', 'x-b'], tail: ['x-a', '2'] });
  assert.deepEqual(editPlan([REMOVE, 'x-b', '', ADD, 'x-b', 'fresh']), { drop: ['x-b'], tail: ['x-b', 'fresh'] });
});

test('response edits: added headers and hooks apply in registration order', () => {
  const f = flowOf([]);
  f.addResponseHeader('x-first', '1');
  f.onResponse((head) => {
    head.headers = head.headers.filter(([k]) => k !== 'x-first');
    head.headers.push(['x-hook', 'h']);
  });
  f.addResponseHeader('x-last', '2');
  const head = { status: 200, headers: [['content-type', 'text/plain']] as [string, string][] };
  f.applyResponseHooks(head);
  assert.deepEqual(head.headers, [['content-type', 'text/plain'], ['x-hook', 'h'], ['x-last', '2']]);
  assert.equal(flowOf([]).hasResponseHooks, false);
});

test('owned headers: the client values never go upstream; a step that sets one still does, and the plan keeps its one-pass shape', () => {
  const passed = flowOf(['x-consumer-id', 'client', 'k', '1'], ['x-consumer-id']);
  passed.setHeader('x-request-id', 'r');
  passed.setHeader('x-consumer-id', 'app');
  assert.deepEqual(passed.applyHeaderEdits(['x-consumer-id', 'client', 'k', '1']), ['k', '1', 'x-request-id', 'r', 'x-consumer-id', 'app']);
  assert.deepEqual(passed.editPlan(), editPlan([SET, 'x-request-id', 'r', SET, 'x-consumer-id', 'app']), 'the same plan as the edits alone');
  const failed = flowOf(['x-consumer-id', 'client', 'k', '1'], ['x-consumer-id']);
  assert.deepEqual(failed.applyHeaderEdits(['x-consumer-id', 'client', 'k', '1']), ['k', '1'], 'no step set it: dropped');
  failed.setHeader('x-other', 'o');
  assert.deepEqual(failed.editPlan(), { drop: ['x-other', 'x-consumer-id'], tail: ['x-other', 'o'] });
});

test('response-headers compiles its settings to one plan: set, add, then remove; set values, then added ones, after the upstream’s', () => {
  let hook: ((head: ResponseHead) => void) | null = null;
  const flow = { onResponse: (h: (head: ResponseHead) => void) => (hook = h) } as unknown as Flow;
  const run = responseHeaders.create!({ set: { 'X-A': '1', b: '2', 'x-a': '1b' }, add: { c: '3', 'x-a': '4' }, remove: ['B'] }, { bucket: '', tenant: 't', env: {} as StepEnv, state: freshState });
  void run(flow);
  const head: ResponseHead = { status: 200, headers: [['x-a', 'up'], ['b', 'up'], ['c', 'up'], ['d', 'up']] };
  hook!(head);
  assert.deepEqual(head.headers, [['c', 'up'], ['d', 'up'], ['x-a', '1'], ['x-a', '1b'], ['c', '3'], ['x-a', '4']]);
  const untouched: ResponseHead = { status: 200, headers: [['k', 'v']] };
  applyPlanToHead(untouched, { drop: [], tail: ['n', 'v'] });
  assert.deepEqual(untouched.headers, [['k', 'v'], ['n', 'v']]);
});
