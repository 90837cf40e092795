import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pruneStale } from '../../scripts/package/prune-stale.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string>; exports: Record<string, unknown> };

/**
 * What `npm pack` puts in the tarball, from package.json `files` (scripts skipped: the build
 * ran before the tests). scripts/package/smoke.mjs installs the real tarball; this is the
 * quick check of its list.
 */
function packedFiles(): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  const [info] = JSON.parse(out.slice(out.indexOf('['))) as { files: { path: string }[] }[];
  return info!.files.map((f) => f.path);
}

test('the tarball holds what its postinstall runs and reads, and no source, test, bench or source map', () => {
  const files = packedFiles();
  const postinstall = /^node (\S+)$/.exec(pkg.scripts.postinstall!)?.[1];
  assert.ok(postinstall, `postinstall runs one script: ${pkg.scripts.postinstall}`);
  // The install step and every module it imports (relative imports, followed), and the checksums it reads.
  const needed = new Set([postinstall, 'scripts/uws-compat/checksums.json']);
  const queue = [postinstall];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    for (const m of readFileSync(join(root, file), 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const dep = posix.join(posix.dirname(file), m[1]!);
      if (!needed.has(dep)) queue.push(dep);
      needed.add(dep);
    }
  }
  assert.ok(needed.size >= 5, `the install step's modules: ${[...needed].join(', ')}`);
  for (const f of needed) assert.ok(files.includes(f), `${f} is packed`);
  for (const f of ['bin/run.js', 'dist/cli/commands/run.js', 'dist/worker/main.js', 'dist/console/index.html', 'package.json']) assert.ok(files.includes(f), `${f} is packed`);

  // Declarations ship for `switchyard/step` and `switchyard/testing` (tsconfig.sdk.json emits them and what they import), never sources.
  const types = (Object.values(pkg.exports) as (string | { types?: string })[]).flatMap((e) => (typeof e === 'object' && e.types ? [e.types.replace(/^\.\//, '')] : []));
  const declared = (f: string) => f.startsWith('dist/') && f.endsWith('.d.ts');
  for (const t of types) assert.ok(files.includes(t), `${t} is packed`);
  const stray = files.filter((f) => /^(src|test|bench|console|docs|\.ci)\//.test(f) || f.endsWith('.map') || (f.endsWith('.ts') && !declared(f)) || f === 'scripts/package/smoke.mjs');
  assert.deepEqual(stray, []);
});

test('installing the tarball runs no build: the build is prepack, never prepare or an install script', () => {
  for (const hook of ['prepare', 'preinstall', 'install']) assert.equal(pkg.scripts[hook], undefined, `no ${hook} script`);
  assert.doesNotMatch(pkg.scripts.postinstall!, /build|tsc|vite/);
  assert.match(pkg.scripts.prepack!, /scripts\/package\/prepack\.mjs/);
});

test("prepack's prune: after a build into dist/, only the files older than its start go, and folders left empty", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-prune-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (rel: string, mtimeS: number) => {
    mkdirSync(join(dir, posix.dirname(rel)), { recursive: true });
    writeFileSync(join(dir, rel), rel);
    utimesSync(join(dir, rel), mtimeS, mtimeS);
  };
  const start = 1_800_000_000; // seconds; files at start - 60 predate the build, at start (the same instant) do not
  write('cli/run.js', start);
  write('cli/removed-command.js', start - 60);
  write('gone/old.js', start - 60);
  write('console/index.html', start + 1);
  const removed = pruneStale(dir, start * 1000).map((p) => p.slice(dir.length + 1)).sort();
  assert.deepEqual(removed, ['cli/removed-command.js', 'gone/old.js']);
  assert.deepEqual(readdirSync(dir, { recursive: true }).map(String).sort(), ['cli', 'cli/run.js', 'console', 'console/index.html']);
});

test('a shrinkwrap a failed pack left behind is neither committed nor packed again as it stood', () => {
  assert.match(readFileSync(join(root, '.gitignore'), 'utf8'), /^npm-shrinkwrap\.json$/m);
  const prepack = readFileSync(join(root, 'scripts/package/prepack.mjs'), 'utf8');
  assert.ok(prepack.indexOf('rmSync(shrinkwrap') < prepack.indexOf('spawnSync('), 'prepack removes it before building');
});

test("the tarball holds step new's templates (no .ts: they are .tmpl files)", () => {
  const files = packedFiles();
  for (const f of ['templates/step-package/src/index.ts.tmpl', 'templates/step-package/src/test/index.test.ts.tmpl', 'templates/step-package/tsconfig.json.tmpl', 'templates/step-package/gitignore.tmpl', 'dist/cli/commands/step/new.js']) {
    assert.ok(files.includes(f), `${f} is packed`);
  }
});
