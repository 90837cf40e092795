import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompiledRoute } from '../../src/contracts/generation.js';
import { takeoverWarnings } from '../../src/compiler/takeover-warnings.js';

const route = (name: string, pathPrefix: string, more: Partial<CompiledRoute> = {}): CompiledRoute => ({
  id: name, tenant: 'default', name, order: 0, pathPrefix, hosts: null, methods: null, caseSensitive: true, rank: 0,
  terminal: { type: 'directResponse', statusCode: 200, body: '', headers: {} }, ...more,
});
const names = (list: ReturnType<typeof takeoverWarnings>) => list.map((w) => `${w.name} <- ${/route (\S+)/.exec(w.message)![1]}`);

test('a new route ranked before an overlapping served route takes its requests; disjoint hosts, methods or prefixes take none', () => {
  const api = route('api', '/api');
  const before = [api];
  assert.deepEqual(names(takeoverWarnings(before, [route('v1', '/api/v1'), api])), ['v1 <- api']);
  assert.deepEqual(names(takeoverWarnings(before, [api, route('other', '/other')])), []);
  const onHost = route('h', '/api', { hosts: ['a.example'] });
  assert.deepEqual(names(takeoverWarnings([onHost], [route('w', '/api/x', { hosts: ['*.example'] }), onHost])), ['w <- h']);
  assert.deepEqual(names(takeoverWarnings([onHost], [route('w', '/api/x', { hosts: ['b.example'] }), onHost])), []);
  const gets = route('g', '/m', { methods: ['GET'] });
  assert.deepEqual(names(takeoverWarnings([gets], [route('p', '/m', { methods: ['POST'], order: 1 }), gets])), []);
});

test('an unchanged route warns of nothing; a changed one that already ranked first over a route does not take it again', () => {
  const a = route('a', '/a');
  const b = route('b', '/');
  assert.deepEqual(takeoverWarnings([a, b], [a, b]), []);
  const widened = route('a', '/a', { methods: ['GET'] });
  assert.deepEqual(names(takeoverWarnings([a, b], [widened, b])), []);
  // A served route a better one covers serves nothing: nothing is taken from it.
  const shadowed = route('s', '/a/s', { order: -1 });
  assert.deepEqual(names(takeoverWarnings([a, b, shadowed], [route('n', '/a/s/n'), a, b, shadowed])), ['n <- a', 'n <- b']);
});
