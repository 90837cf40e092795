import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { BUILTIN_STEPS } from '../../src/steps/registry.js';
import { renderStepsDoc } from '../../src/steps/steps-doc.js';

test('docs/steps.md is what the registry renders (run `npm run docs:steps` after changing a step)', () => {
  const onDisk = readFileSync(new URL('../../docs/steps.md', import.meta.url), 'utf8');
  assert.equal(onDisk, renderStepsDoc());
});

test('every step documents an example that its schema accepts, and a runtime unless compile-time only', () => {
  for (const s of BUILTIN_STEPS.values()) {
    const r = v.safeParse(s.schema, s.example);
    assert.ok(r.success, `${s.code}: example rejected: ${r.success ? '' : r.issues.map((i) => i.message).join('; ')}`);
    assert.ok(s.create || s.compileTime, `${s.code} has neither a runtime nor compileTime`);
  }
});

test('unknown settings are rejected by every step schema', () => {
  for (const s of BUILTIN_STEPS.values()) {
    const r = v.safeParse(s.schema, { ...s.example, noSuchSetting: 1 });
    assert.equal(r.success, false, `${s.code} accepted an unknown setting`);
  }
});
