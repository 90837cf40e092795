import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { ROOT, tempDir } from './gateway.js';

/**
 * A step package in a temporary folder, rewritten in place as an operator upgrading it would:
 * version `n` stamps its answers `x-step-build: v<n>`; `refuses` makes its schema refuse the
 * settings the routes use.
 */
export function versionedPackage(t: TestContext): { dir: string; write(n: number, refuses?: boolean): void } {
  const dir = join(tempDir(t), 'versioned-step');
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'switchyard'), 'dir');
  const write = (n: number, refuses = false) => {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'sy-test-versioned-step', version: `${n}.0.0`, type: 'module', main: 'index.js' }));
    writeFileSync(
      join(dir, 'index.js'),
      `import { defineStep, v } from 'switchyard/step';
export default defineStep({
  code: 'stamp-build',
  summary: 'Stamps its answers with its build',
  settings: ${refuses ? "v.strictObject({ required: v.string() })" : 'v.strictObject({})'},
  answers: [],
  create: () => (flow) => flow.addResponseHeader('x-step-build', 'v${n}'),
});
`,
    );
  };
  write(1);
  return { dir, write };
}
