import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StepPackagesSettings } from '../../contracts/ipc.js';
import type { StepDefinition as PackageStep } from '../../sdk/step.js';
import type { StepDefinition } from '../step.js';
import { BUILTIN_STEPS } from '../registry.js';
import { StepPackageError, StepRegistry } from '../step-registry.js';
import { contentHash } from './content-hash.js';
import { definitionProblems } from './check-definition.js';
import { adaptPackageStep } from './package-step.js';


/**
 * worker.json `steps.packages` entries as folders: a path (absolute, or relative to
 * worker.json's folder: it starts with `.` or `/`) as is; a package name looked up in the
 * node_modules folders from worker.json's folder up, as Node resolves packages.
 */
export function resolvePackageDirs(entries: readonly string[], baseDir: string): string[] {
  return entries.map((entry) => {
    const isPath = isAbsolute(entry) || entry.startsWith('.');
    const dir = isPath ? resolve(baseDir, entry) : findInstalled(entry, baseDir);
    if (dir === null || !existsSync(join(dir, 'package.json'))) {
      throw new StepPackageError(`steps.packages: ${entry} is not ${isPath ? 'a folder with a package.json' : `installed (no node_modules/${entry} from ${baseDir} up)`}`);
    }
    return dir;
  });
}

function findInstalled(name: string, from: string): string | null {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return null;
  }
}

/** Every step of the packages, checked and adapted; a StepPackageError names the first bad one. */
export async function loadPackageSteps(dirs: readonly string[]): Promise<StepDefinition[]> {
  const out: StepDefinition[] = [];
  for (const dir of dirs) out.push(...(await loadPackage(dir)));
  return out;
}

/** The registry of worker.json's packages: built-ins, the packages' steps, `steps.tenants`; reload() reads them again. */
export async function loadStepRegistry(settings: StepPackagesSettings | undefined): Promise<StepRegistry> {
  const dirs = settings?.dirs ?? [];
  const load = () => loadPackageSteps(dirs);
  return new StepRegistry(BUILTIN_STEPS, await load(), settings?.tenants ?? {}, load);
}

async function loadPackage(dir: string): Promise<StepDefinition[]> {
  let pkg: { name?: unknown; version?: unknown; main?: unknown; exports?: unknown };
  try {
    pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  } catch (err) {
    throw new StepPackageError(`step package ${dir}: cannot read package.json: ${(err as Error).message}`);
  }
  if (typeof pkg.name !== 'string' || typeof pkg.version !== 'string') throw new StepPackageError(`step package ${dir}: package.json needs a name and a version`);
  const name = pkg.name;
  const fail = (why: string) => new StepPackageError(`step package ${name} (${dir}): ${why}`);
  const entry = join(dir, entryOf(pkg));
  if (!existsSync(entry) || !statSync(entry).isFile()) throw fail(`its entry ${entry} does not exist`);
  const origin = { package: name, version: pkg.version, hash: contentHash(dir) };
  let mod: { default?: unknown };
  try {
    // The hash in the URL: a changed package (reload) is a fresh module, an unchanged one the cached one.
    mod = (await import(`${pathToFileURL(entry).href}?v=${origin.hash}`)) as { default?: unknown };
  } catch (err) {
    throw fail(`cannot be imported: ${(err as Error).message}`);
  }
  const defs = Array.isArray(mod.default) ? (mod.default as unknown[]) : mod.default === undefined ? [] : [mod.default];
  if (defs.length === 0) throw fail('its default export is not a step or an array of steps');
  return defs.map((def, i) => {
    const problems = definitionProblems(def);
    const which = typeof (def as { code?: unknown })?.code === 'string' ? `step ${(def as { code: string }).code}` : `step #${i}`;
    if (problems.length) throw fail(`${which}: ${problems.join('; ')}`);
    return adaptPackageStep(def as PackageStep, origin);
  });
}

/** The file `import` would load: exports' `.` (import, node or default condition), else main, else index.js. */
function entryOf(pkg: { main?: unknown; exports?: unknown }): string {
  const pick = (e: unknown): string | null => {
    if (typeof e === 'string') return e;
    if (e === null || typeof e !== 'object' || Array.isArray(e)) return null;
    const o = e as Record<string, unknown>;
    if ('.' in o) return pick(o['.']);
    for (const cond of ['import', 'node', 'default']) if (cond in o) return pick(o[cond]);
    return null;
  };
  return pick(pkg.exports) ?? (typeof pkg.main === 'string' ? pkg.main : 'index.js');
}
