import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseStore, type StoredAnswer } from '../../src/steps/response-store.js';

const answer = (body: string): StoredAnswer => ({ status: 200, headers: [], body: Buffer.from(body), expires: Number.MAX_SAFE_INTEGER, storedAt: 0, ageAtStore: 0 });
const headers = (h: Record<string, string>) => (n: string) => h[n];
const none = headers({});

test('distinct URLs never grow the store or its Vary memory beyond maxEntries', () => {
  // Regression: the Vary names were remembered per URL forever, so a client asking for
  // ever new query strings grew the worker's memory without bound.
  const store = new ResponseStore(3);
  for (let i = 0; i < 1000; i++) store.set(`/item?x=${i}`, i % 2 ? ['accept-language'] : [], none, answer(String(i)));
  assert.equal(store.size, 3);
  assert.equal(store.baseCount, 3);
  assert.equal(store.get('/item?x=999', none)?.body.toString(), '999');
  assert.equal(store.get('/item?x=996', none), undefined, 'the oldest went first');
});

test('Vary: each combination of the named headers is its own answer; a base with several answers is remembered once', () => {
  const store = new ResponseStore(10);
  store.set('/v', ['accept-language'], headers({ 'accept-language': 'de' }), answer('de'));
  store.set('/v', ['accept-language'], headers({ 'accept-language': 'fr' }), answer('fr'));
  assert.equal(store.get('/v', headers({ 'accept-language': 'de' }))?.body.toString(), 'de');
  assert.equal(store.get('/v', headers({ 'accept-language': 'fr' }))?.body.toString(), 'fr');
  assert.equal(store.get('/v', headers({ 'accept-language': 'it' })), undefined);
  assert.equal(store.get('/v', none), undefined);
  assert.equal(store.size, 2);
  assert.equal(store.baseCount, 1);
});

test('storing the same key again replaces the answer and keeps the counts right', () => {
  const store = new ResponseStore(2);
  store.set('/a', [], none, answer('1'));
  store.set('/a', [], none, answer('2'));
  assert.equal(store.size, 1);
  assert.equal(store.get('/a', none)?.body.toString(), '2');
  store.set('/b', [], none, answer('b'));
  store.set('/c', [], none, answer('c')); // evicts /a, the oldest
  assert.equal(store.get('/a', none), undefined);
  assert.equal(store.baseCount, 2);
});

test('a changed Vary makes the old answers unreachable; they still count and age out', () => {
  const store = new ResponseStore(2);
  store.set('/v', ['x-a'], headers({ 'x-a': '1' }), answer('by a'));
  store.set('/v', ['x-b'], headers({ 'x-b': '1' }), answer('by b'));
  assert.equal(store.get('/v', headers({ 'x-a': '1', 'x-b': '1' }))?.body.toString(), 'by b');
  assert.equal(store.size, 2);
  store.set('/w', [], none, answer('w')); // evicts the unreachable 'by a'
  store.set('/x', [], none, answer('x')); // evicts 'by b': no answer of /v is left
  assert.equal(store.baseCount, 2);
  assert.equal(store.get('/v', headers({ 'x-b': '1' })), undefined);
});
