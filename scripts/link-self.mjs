// Run by `npm run build`, in this repository only: node_modules/switchyard points at the repository, so
// the step packages under examples/ and test/fixtures/ import `switchyard/step` as an installed
// package would. Installed as a dependency (under node_modules/), the package does nothing.
import { existsSync, lstatSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const link = join(root, 'node_modules', 'switchyard');
if (!existsSync(join(root, '.git')) || dirname(root).endsWith('node_modules')) process.exit(0);
const present = (() => {
  try {
    return Boolean(lstatSync(link));
  } catch {
    return false; // absent
  }
})();
if (!present) symlinkSync('..', link, 'dir');
