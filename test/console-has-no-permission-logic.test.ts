/**
 * The console decides nothing about permissions: it renders the server's answer through
 * one primitive (gate.tsx). No scope string, family check or tenant rule may appear in
 * its source.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FAMILIES } from '../src/contracts/scopes.js';
import { ROOT } from './helpers/gateway.js';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : /\.(tsx?|css|html)$/.test(f) ? [p] : [];
  });
}

test('no scope strings, masks or role checks in the console source', () => {
  const src = files(join(ROOT, 'console', 'src'));
  assert.ok(src.length >= 5, 'the console source is where this test looks');
  const scope = new RegExp(`\\b(${FAMILIES.join('|')}):(read|write|\\*)`);
  const forbidden = [scope, /\bmasks\b/, /\bscopes\s*\.\s*(includes|some|every|indexOf)/, /identity\.kind\s*[!=]==/, /\brole\s*[!=]==/, /isAdmin/];
  for (const f of src) {
    const text = readFileSync(f, 'utf8');
    for (const re of forbidden) assert.ok(!re.test(text), `${f.slice(ROOT.length)} matches ${re}`);
  }
});

test('every gated control goes through <Gate>: useFeature is read only by gate.tsx', () => {
  for (const f of files(join(ROOT, 'console', 'src'))) {
    if (f.endsWith('gate.tsx')) continue;
    const text = readFileSync(f, 'utf8');
    assert.ok(!/\.features\b/.test(text), `${f.slice(ROOT.length)} reads model.features directly`);
  }
});
