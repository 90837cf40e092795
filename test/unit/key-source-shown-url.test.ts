import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeySets } from '../../src/supervisor/key-sets/key-sets.js';
import { shownUrl, sourceLabel } from '../../src/shared/shown-url.js';
import { Exposition } from '../../src/shared/metrics-exposition.js';
import { waitFor } from '../helpers/wait.js';

test('key source URL shown: without its query, fragment or userinfo; otherwise as written', () => {
  assert.equal(shownUrl('https://idp.example/jwks?api_key=s3cret&x=1'), 'https://idp.example/jwks');
  assert.equal(shownUrl('https://user:pa%40ss@idp.example:8443/t/jwks#frag'), 'https://idp.example:8443/t/jwks');
  assert.equal(shownUrl('https://idp.example/realms/a?'), 'https://idp.example/realms/a');
  assert.equal(shownUrl('http://127.0.0.1:9000'), 'http://127.0.0.1:9000', 'no trailing slash added');
  assert.equal(shownUrl('https://idp.example/a@b/jwks'), 'https://idp.example/a@b/jwks', 'an @ in the path is not userinfo');
});

test('key sets: metric labels and log lines name the source without its query or userinfo', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const log = { info: (o: Record<string, unknown>) => lines.push(o), warn: (o: Record<string, unknown>) => lines.push(o), error: (o: Record<string, unknown>) => lines.push(o) } as never;
  const url = 'https://u:pw@idp.example/jwks?key=s3cret';
  const sets = new KeySets({ fetch: () => Promise.reject(new Error('unreachable')), pushAll: () => {}, sendTo: () => {}, log });
  t.after(() => sets.stop());
  sets.serve([{ id: `t jwks ${url}`, tenant: 't', kind: 'jwks', url, minRefreshSeconds: 60, maxStaleSeconds: 3600 }]);
  await waitFor('expired', () => sets.entries()[0]?.state === 'expired');
  const out = new Exposition();
  sets.write(out);
  const text = out.text();
  assert.match(text, /source="https:\/\/idp\.example\/jwks#[0-9a-f]{8}"/);
  assert.ok(lines.length > 0, 'the expiry is logged');
  assert.equal(lines[0]!.source, sourceLabel(url));
  assert.match(String(lines[0]!.source), /^https:\/\/idp\.example\/jwks#[0-9a-f]{8}$/);
  for (const shown of [text, JSON.stringify(lines)]) {
    assert.doesNotMatch(shown, /s3cret|pw@/);
  }
});

test('key sets: two sources that differ only by query (Azure AD B2C policies) give distinct series and log fields', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const log = { info: (o: Record<string, unknown>) => lines.push(o), warn: (o: Record<string, unknown>) => lines.push(o), error: (o: Record<string, unknown>) => lines.push(o) } as never;
  const base = 'https://b2c.example/tenant/discovery/v2.0/keys';
  const urls = [`${base}?p=B2C_1_signin`, `${base}?p=B2C_1_signup`];
  const plain = 'https://idp.example/jwks';
  const sets = new KeySets({ fetch: () => Promise.reject(new Error('unreachable')), pushAll: () => {}, sendTo: () => {}, log });
  t.after(() => sets.stop());
  sets.serve([...urls, plain].map((url) => ({ id: `t jwks ${url}`, tenant: 't', kind: 'jwks' as const, url, minRefreshSeconds: 60, maxStaleSeconds: 3600 })));
  await waitFor('expired', () => sets.entries().every((e) => e.state === 'expired'));
  const out = new Exposition();
  sets.write(out);
  const series = out.text().split('\n').filter((l) => l.startsWith('switchyard_auth_key_set_state{') && l.includes('state="expired"'));
  const sources = series.map((l) => /source="([^"]*)"/.exec(l)![1]);
  assert.equal(new Set(series).size, 3, 'three distinct series');
  assert.equal(new Set(sources).size, 3);
  assert.ok(sources.includes(plain), 'a URL the cut leaves whole keeps its plain label');
  for (const u of urls) assert.ok(sources.includes(sourceLabel(u)));
  assert.deepEqual(new Set(lines.map((l) => l.source)), new Set(sources), 'the log lines name them as the series do');
  assert.doesNotMatch(out.text(), /B2C_1_/);
});
