// npm prepack (`npm pack`, `npm publish`): the tarball carries a built gateway, so installing
// it needs no devDependencies and runs no build. dist/ is emptied first, so only what this
// build made ships (no file of a source since removed). The lockfile goes in as
// npm-shrinkwrap.json: a global install gets the dependency tree the tests ran on (its
// devDependencies are marked dev and left out), not whatever the ranges resolve to that day.
import { spawnSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
rmSync(new URL('../../dist', import.meta.url), { recursive: true, force: true });
const npm = process.env.npm_execpath;
const build = npm
  ? spawnSync(process.execPath, [npm, 'run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
copyFileSync(new URL('../../package-lock.json', import.meta.url), new URL('../../npm-shrinkwrap.json', import.meta.url));
