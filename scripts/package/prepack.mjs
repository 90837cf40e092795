// npm prepack (`npm pack`, `npm publish`): the tarball carries a built gateway, so installing
// it needs no devDependencies and runs no build. The build goes into dist/ in place, then
// what it did not write is removed (prune-stale.mjs), so only what this build made ships and
// a failed build leaves the previous dist/ rather than none. The lockfile goes in as
// npm-shrinkwrap.json: a global install gets the dependency tree the tests ran on (its
// devDependencies are marked dev and left out), not whatever the ranges resolve to that day.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pruneStale } from './prune-stale.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shrinkwrap = join(root, 'npm-shrinkwrap.json');
// One a pack left when it failed after this script (postpack never ran) goes first: npm reads
// a shrinkwrap in place of package-lock.json. It is also in .gitignore, so it is never committed.
rmSync(shrinkwrap, { force: true });

const dist = join(root, 'dist');
mkdirSync(dist, { recursive: true });
// The build's start on the file system's own clock: what it writes is at least this new.
const stamp = join(dist, '.prepack-start');
writeFileSync(stamp, '');
const since = statSync(stamp).mtimeMs;
rmSync(stamp);
const npm = process.env.npm_execpath;
const build = npm
  ? spawnSync(process.execPath, [npm, 'run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
pruneStale(dist, since);
copyFileSync(join(root, 'package-lock.json'), shrinkwrap);
