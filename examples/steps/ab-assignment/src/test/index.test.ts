import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSettings, stepTester } from 'switchyard/testing';
import ab, { pickVariant } from '../index.js';

const settings = { variants: [{ name: 'control', weight: 1 }, { name: 'beta', weight: 1 }], keyHeader: 'x-user-id', maxAgeSeconds: 3600 };

test('a valid cookie keeps its variant: the upstream is told, no new cookie is set', async () => {
  const t = stepTester(ab, settings);
  const r = await t.run({ path: '/', headers: { cookie: 'ab=beta' } });
  assert.equal(r.upstream.headers['x-variant'], 'beta');
  assert.deepEqual(r.response().headerAll('set-cookie'), []);
});

test('without a cookie a variant is assigned and set as a sticky cookie', async () => {
  const t = stepTester(ab, { ...settings, secure: true });
  const r = await t.run({ path: '/' });
  const variant = r.upstream.headers['x-variant'];
  assert.ok(variant === 'control' || variant === 'beta', String(variant));
  assert.deepEqual(r.response({ headers: [['set-cookie', 'session=1']] }).headerAll('set-cookie'), ['session=1', `ab=${variant}; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax; Secure`]);
});

test('a cookie naming no current variant is replaced', async () => {
  const r = await stepTester(ab, settings).run({ path: '/', headers: { cookie: 'ab=retired', 'x-user-id': 'u1' } });
  assert.notEqual(r.upstream.headers['x-variant'], 'retired');
  assert.match(r.response().header('set-cookie') ?? '', /^ab=(control|beta); /);
});

test('the same user id always gets the same variant; different ones spread over both', async () => {
  const t = stepTester(ab, settings);
  const of = async (user: string) => (await t.run({ path: '/', headers: { 'x-user-id': user } })).upstream.headers['x-variant'];
  const first = await of('user-42');
  for (let i = 0; i < 5; i++) assert.equal(await of('user-42'), first);
  const seen = new Set<string | undefined>();
  for (let i = 0; i < 40; i++) seen.add(await of(`user-${i}`));
  assert.deepEqual([...seen].sort(), ['beta', 'control']);
});

test("a client's own x-variant never reaches the upstream", async () => {
  const r = await stepTester(ab, settings).run({ path: '/', headers: { 'x-variant': 'beta', cookie: 'ab=control' } });
  assert.equal(r.upstream.headers['x-variant'], 'control');
});

test('weights: a zero-weight variant is never picked; the split follows the weights', () => {
  const vs = [{ name: 'a', weight: 3 }, { name: 'off', weight: 0 }, { name: 'b', weight: 1 }];
  assert.equal(pickVariant(vs, 0), 'a');
  assert.equal(pickVariant(vs, 0.749), 'a');
  assert.equal(pickVariant(vs, 0.75), 'b');
  assert.equal(pickVariant(vs, 0.999999), 'b');
});

test('settings: the example fits; duplicate names, no weight, and a bad cookie name are refused', () => {
  assert.deepEqual(checkSettings(ab, ab.example), []);
  assert.deepEqual(checkSettings(ab, { variants: [{ name: 'a', weight: 1 }, { name: 'a', weight: 1 }] }).map((i) => i.pointer), ['/settings/variants']);
  assert.deepEqual(checkSettings(ab, { variants: [{ name: 'a', weight: 0 }] }).map((i) => i.pointer), ['/settings/variants']);
  assert.deepEqual(checkSettings(ab, { cookie: 'a b', variants: [{ name: 'a', weight: 1 }] }).map((i) => i.pointer), ['/settings/cookie']);
});
