import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile } from '../../src/compiler/compile.js';
import type { DraftRow } from '../../src/contracts/entities.js';

type Node = { id: string; step: string; settings?: unknown; failureStrategy?: string };
const cluster: DraftRow = { kind: 'cluster', name: 'c', doc: { targets: ['127.0.0.1:1'] } };
const route = (name: string, steps: unknown[], terminal: Record<string, unknown> = { cluster: 'c' }): DraftRow => ({ kind: 'route', name, doc: { ...terminal, pathPrefix: `/${name}`, steps } });
const orch = (name: string, nodes: Node[], links: [string, string][] = [], groups?: { id: string; nodes: string[]; merge?: string }[]): DraftRow => ({
  kind: 'orch',
  name,
  doc: { nodes, links: links.map(([from, to]) => ({ from, to })), ...(groups && { groups }) },
});
const bind = (ref: string) => ({ code: 'orch', settings: { ref } });
const echo = (id: string, extra: Partial<Node> = {}): Node => ({ id, step: 'echo', ...extra });
const headers = (id: string): Node => ({ id, step: 'request-headers', settings: { set: { 'x-a': '1' } } });
const abortAll = (id: string, extra: Partial<Node> = {}): Node => ({ id, step: 'fault-injection', settings: { abort: { percent: 100, status: 503 } }, ...extra });
const keyAuth = (id: string): Node => ({ id, step: 'key-auth', settings: { header: 'x-key', keys: [{ id: 'k', sha256: 'a'.repeat(64) }] } });

/** The NodeNeverRuns warnings of compiling `drafts`, as `kind/name pointer: message`. */
function neverRuns(drafts: DraftRow[]): string[] {
  const r = compile({ tenant: 'default', published: [], drafts: [cluster, ...drafts] });
  assert.deepEqual(r.issues, [], 'the drafts compile');
  return r.warnings.filter((w) => w.code === 'Compile.Orch.NodeNeverRuns').map((w) => `${w.kind}/${w.name} ${w.pointer}: ${w.message}`);
}

test("a chain's nodes after an echo never run: each is named with the node that answers; the ones before are not", () => {
  const chain = orch('debug', [headers('first'), echo('dump'), { id: 'log', step: 'access-log' }, { id: 'nested', step: 'orch', settings: { ref: 'more' } }], [
    ['first', 'dump'],
    ['dump', 'log'],
    ['log', 'nested'],
  ]);
  assert.deepEqual(neverRuns([chain, orch('more', [headers('h')]), route('r', [bind('debug')])]), [
    'orch/debug /nodes/2: node log (access-log) never runs: node dump (echo) answers every request before it',
    'orch/debug /nodes/3: node nested (orch more) never runs: node dump (echo) answers every request before it',
  ]);
});

test("a route's own steps after an echo, or after a chain that always answers, never run", () => {
  const r = neverRuns([
    orch('dbg', [headers('h'), echo('e')], [['h', 'e']]),
    route('inline', [{ code: 'echo' }, { code: 'request-headers', settings: { set: { 'x-a': '1' } } }, bind('dbg')]),
    route('bound', [bind('dbg'), { code: 'access-log' }]),
  ]);
  assert.deepEqual(r, [
    'route/inline /steps/1: step 1 (request-headers) never runs: step 0 (echo) answers every request before it',
    'route/inline /steps/2: step 2 (orch dbg) never runs: step 0 (echo) answers every request before it',
    'route/bound /steps/1: step 1 (access-log) never runs: step 0 (orch dbg), whose echo step answers every request before it',
  ]);
});

test('nothing is warned when the answering step is last, or when the route answers by itself (StepsIgnored says so)', () => {
  assert.deepEqual(neverRuns([orch('tail', [headers('h'), echo('e')], [['h', 'e']]), route('r', [{ code: 'access-log' }, bind('tail')]), route('s', [{ code: 'access-log' }, { code: 'echo' }])]), []);
  const fixed = compile({ tenant: 'default', published: [], drafts: [route('fixed', [{ code: 'echo' }, { code: 'access-log' }], { directResponse: { statusCode: 200 } })] });
  assert.deepEqual(fixed.warnings.map((w) => w.code), ['Compile.Route.StepsIgnored']);
});

test('a chain bound only by a route that answers by itself gets StepsIgnored alone, not NodeNeverRuns on top; a running route binding it still warns', () => {
  const dbg = orch('dbg', [echo('e'), headers('h')], [['e', 'h']]);
  const fixed = route('fixed', [bind('dbg')], { directResponse: { statusCode: 200 } });
  const only = compile({ tenant: 'default', published: [], drafts: [dbg, fixed] });
  assert.deepEqual(only.issues, []);
  assert.deepEqual(only.warnings.map((w) => `${w.code} ${w.kind}/${w.name}`), ['Compile.Route.StepsIgnored route/fixed']);
  assert.deepEqual(neverRuns([dbg, fixed, route('live', [bind('dbg')])]), ['orch/dbg /nodes/1: node h (request-headers) never runs: node e (echo) answers every request before it']);
});

test('the order is the links\' order, not nodes[]: a node listed after the echo but linked before it runs', () => {
  assert.deepEqual(neverRuns([orch('o', [echo('e'), headers('h')], [['h', 'e']]), route('r', [bind('o')])]), []);
  // Without links the order is nodes[] order.
  assert.deepEqual(neverRuns([orch('o', [echo('e'), headers('h')]), route('r', [bind('o')])]), [
    'orch/o /nodes/1: node h (request-headers) never runs: node e (echo) answers every request before it',
  ]);
});

test('failureStrategy Continue passes over a refusal that always comes (fault-injection at 100 %), never over an echo', () => {
  const after = (first: Node) => neverRuns([orch('o', [first, headers('h')], [[first.id, 'h']]), route('r', [bind('o')])]);
  assert.deepEqual(after(abortAll('f')), ['orch/o /nodes/1: node h (request-headers) never runs: node f (fault-injection) answers every request before it']);
  assert.deepEqual(after(abortAll('f', { failureStrategy: 'Continue' })), []);
  assert.equal(after(echo('e', { failureStrategy: 'Continue' })).length, 1);
  assert.deepEqual(after({ id: 'f', step: 'fault-injection', settings: { abort: { percent: 99.9, status: 503 } } }), [], 'a share below 100 % lets some requests on');
});

test('groups: `all` answers when one member always does; `any` and `first` only when every member does', () => {
  const grouped = (merge: string, members: Node[]) =>
    neverRuns([orch('o', [...members, headers('after')], members.map((m) => [m.id, 'after'] as [string, string]), [{ id: 'g', nodes: members.map((m) => m.id), merge }]), route('r', [bind('o')])]);
  const warned = ['orch/o /nodes/2: node after (request-headers) never runs: group g (all), whose echo step answers every request before it'];
  assert.deepEqual(grouped('all', [keyAuth('auth'), echo('e')]), warned);
  assert.deepEqual(grouped('any', [keyAuth('auth'), echo('e')]), [], 'a key that passes lets the chain on');
  assert.deepEqual(grouped('first', [keyAuth('auth'), echo('e')]), []);
  assert.equal(grouped('any', [abortAll('f'), echo('e')]).length, 1);
  assert.equal(grouped('first', [abortAll('f'), echo('e')]).length, 1);
});

test('a nested group inside an `any` group: a member that always refuses and one that always serves still answer', () => {
  // inner `any` (refusal, served) answers served; outer `any` with it and a refusal therefore always answers.
  const inner = orch('inner', [abortAll('f'), echo('e'), headers('x')], [['f', 'x'], ['e', 'x']], [{ id: 'g', nodes: ['f', 'e'], merge: 'any' }]);
  const r = neverRuns([inner, orch('outer', [abortAll('f2'), { id: 'in', step: 'orch', settings: { ref: 'inner' } }, headers('after')], [['f2', 'after'], ['in', 'after']], [{ id: 'g2', nodes: ['f2', 'in'], merge: 'any' }]), route('r', [bind('outer')])]);
  assert.deepEqual(r, [
    'orch/inner /nodes/2: node x (request-headers) never runs: group g (any), whose echo step answers every request before it',
    'orch/outer /nodes/2: node after (request-headers) never runs: group g2 (any), whose echo step answers every request before it',
  ]);
});

test('a chain bound by several routes is warned about once', () => {
  const r = neverRuns([orch('o', [echo('e'), headers('h')]), route('a', [bind('o')]), route('b', [bind('o')])]);
  assert.equal(r.length, 1, r.join('\n'));
});

test('a chain bound through a Continue node: its refusal is passed over there, so its nodes after it are warned about only where no such binding exists', () => {
  const inner = orch('inner', [abortAll('f'), headers('h')], [['f', 'h']]);
  const outer = orch('outer', [{ id: 'x', step: 'orch', settings: { ref: 'inner' }, failureStrategy: 'Continue' }, headers('after')], [['x', 'after']]);
  const warned = 'orch/inner /nodes/1: node h (request-headers) never runs: node f (fault-injection) answers every request before it';
  assert.deepEqual(neverRuns([inner, route('direct', [bind('inner')])]), [warned]);
  assert.deepEqual(neverRuns([inner, outer, route('through', [bind('outer')])]), []);
  assert.deepEqual(neverRuns([inner, outer, route('direct', [bind('inner')]), route('through', [bind('outer')])]), [], 'h runs on route through');
  assert.deepEqual(neverRuns([inner, outer, route('through', [bind('outer')]), route('direct', [bind('inner')])]), [], 'whichever route compiles first');
});
