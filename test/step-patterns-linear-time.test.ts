import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply, dryRun, setEntity, deleteEntity } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

// A pattern that JavaScript's backtracking engine takes exponential time on: a
// 31-character near miss held a worker for over a minute.
const EXPONENTIAL = '^(\\w|\\d)*$';
const HOSTILE_UA = '1'.repeat(2_000) + '!';

test('tenant patterns run in linear time: hostile inputs are answered promptly and other routes keep answering', BOUNDED, async (t) => {
  const up = await startUpstream(t);
  // One worker: a request holding it would hold every other request too.
  const gw = await startGateway(t, { keys: [ROOT_KEY], workers: 1 });
  const r = await apply(gw, [
    ['cluster', 'up', { targets: [up.target] }],
    ['route', 'bot', { cluster: 'up', pathPrefix: '/bot', steps: [{ code: 'bot-detection', settings: { deny: [EXPONENTIAL, 'evilbot'], allow: ['^(a|aa)+$'] } }] }],
    ['route', 'rw', { cluster: 'up', pathPrefix: '/rw', steps: [{ code: 'path-rewrite', settings: { regex: { pattern: '^/rw/((a|aa)+)$', replacement: '/done/$1' } } }] }],
    ['route', 'body', { cluster: 'up', pathPrefix: '/body', steps: [{ code: 'body-validate', settings: { schema: { type: 'object', properties: { s: { type: 'string', pattern: EXPONENTIAL } } } } }] }],
    ['route', 'other', { cluster: 'up', pathPrefix: '/other' }],
  ]);
  assert.equal(r.ok, true);
  const get = (path: string, ua: string) => request(`${gw.dataUrl}${path}`, { headers: { 'user-agent': ua }, timeoutMs: 2_000 });

  await t.test('bot-detection: the hostile User-Agent is answered within 2 s; the patterns still decide', async () => {
    assert.equal((await get('/bot', HOSTILE_UA)).status, 200, 'a near miss is not denied');
    assert.equal((await get('/bot', '1'.repeat(2_000))).status, 403, 'a full match is denied');
    assert.equal((await get('/bot', 'Mozilla/5.0 EvilBot')).status, 403, 'case-insensitive, anywhere in the User-Agent');
    assert.equal((await get('/bot', 'Mozilla/5.0')).status, 200);
    assert.equal((await get('/bot', 'a'.repeat(2_000) + '!')).status, 200, 'the allow pattern near miss is answered too');
  });

  await t.test('path-rewrite and body-validate: hostile near misses are answered within 2 s', async () => {
    const miss = await get(`/rw/${'a'.repeat(2_000)}!`, 'x');
    assert.equal(miss.status, 200);
    assert.equal(up.requests.at(-1)!.url, `/rw/${'a'.repeat(2_000)}!`, 'no match: the path goes unchanged');
    assert.equal((await get('/rw/aaa', 'x')).status, 200);
    assert.equal(up.requests.at(-1)!.url, '/done/aaa', 'a match is rewritten with its group');
    const body = await request(`${gw.dataUrl}/body`, { method: 'POST', body: { s: '1'.repeat(20_000) + '!' }, timeoutMs: 2_000 });
    assert.equal(body.status, 400);
    assert.equal(body.json.code, 'Svc.Data.BodyInvalid');
  });

  await t.test('while hostile requests are in flight, another route answers within 2 s', async () => {
    const hostile = Array.from({ length: 6 }, () => get('/bot', HOSTILE_UA));
    for (let i = 0; i < 5; i++) assert.equal((await get('/other', 'Mozilla/5.0')).status, 200);
    for (const res of await Promise.all(hostile)) assert.equal(res.status, 200);
  });

  await t.test('patterns RE2 cannot run are refused at dry-run, naming the feature', async () => {
    const cases: [string, unknown, string, RegExp][] = [
      ['lb', { code: 'bot-detection', settings: { deny: ['(?<!good)bot'] } }, '/steps/0/settings/deny/0', /bot-detection: pattern uses a feature RE2 does not support: negative lookbehind/],
      ['br', { code: 'path-rewrite', settings: { regex: { pattern: '^/(\\w+)/\\1', replacement: '/$1' } } }, '/steps/0/settings/regex/pattern', /path-rewrite: pattern uses a feature RE2 does not support: backreference/],
      ['la', { code: 'body-validate', settings: { schema: { type: 'string', pattern: '^(?=a)' } } }, '/steps/0/settings/schema', /body-validate: must be a valid JSON Schema: pattern "\^\(\?=a\)" uses a feature RE2 does not support: lookahead/],
    ];
    for (const [name, step, pointer, message] of cases) {
      await setEntity(gw, 'route', `bad-${name}`, { cluster: 'up', pathPrefix: `/bad-${name}`, steps: [step] });
      const dr = await dryRun(gw);
      assert.equal(dr.status, 422, dr.text);
      const issue = dr.json.issues.find((i: { name: string }) => i.name === `bad-${name}`);
      assert.ok(issue, `an issue for bad-${name}: ${dr.text}`);
      assert.equal(issue.code, 'Compile.Step.Settings');
      assert.equal(issue.pointer, pointer);
      assert.match(issue.message, message);
      await deleteEntity(gw, 'route', `bad-${name}`);
    }
  });
});
