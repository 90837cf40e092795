import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** A package step's code, as the gateway loads it: lower case, `a-z0-9-`, 2 to 63 characters. */
export const STEP_CODE = /^[a-z][a-z0-9-]{1,62}$/;

export interface ScaffoldInput {
  code: string;
  /** The folder to create; it must not exist. */
  dir: string;
  /** The gateway package's root: the package depends on it as `file:<root>`. */
  gatewayRoot: string;
  /** The gateway's package.json, for the typescript and @types/node versions it builds with. */
  gatewayPackage: { devDependencies?: Record<string, string> };
}

/** `require-tenant` -> `RequireTenant`: the answers' code prefix (`Pkg.Reason`). */
export function answerPrefix(code: string): string {
  return code.replace(/(^|-)([a-z0-9])/g, (_m, _d, c: string) => c.toUpperCase());
}

/** Why the scaffold cannot be written, or null. */
export function scaffoldRefusal(code: string, dir: string): string | null {
  if (!STEP_CODE.test(code)) return `${JSON.stringify(code)} is not a step code: lower case a-z, 0-9 and '-', starting with a letter, 2 to 63 characters`;
  if (existsSync(dir)) return `${dir} already exists; step new never writes into an existing folder (remove it, or pick another --dir)`;
  return null;
}

/**
 * Writes a step package: package.json built here (the gateway as a `file:` dependency),
 * the rest from templates/step-package/ with `{{code}}`, `{{prefix}}`, `{{name}}`,
 * `{{gateway}}` and `{{dir}}` filled in. Returns the files written, relative to `dir`.
 */
export function writeScaffold(input: ScaffoldInput): string[] {
  const { code, dir, gatewayRoot } = input;
  const name = `switchyard-step-${code}`;
  const dev = input.gatewayPackage.devDependencies ?? {};
  const pkg = {
    name,
    version: '0.1.0',
    description: `Switchyard step ${code}`,
    type: 'module',
    main: 'dist/index.js',
    exports: { '.': './dist/index.js' },
    files: ['dist', '!dist/test'],
    scripts: { build: 'tsc -p .', test: 'npm run build && node --test dist/test/' },
    dependencies: { switchyard: `file:${gatewayRoot}` },
    devDependencies: { '@types/node': dev['@types/node'] ?? '^20.19.43', typescript: dev.typescript ?? '^5.9.3' },
  };
  const vars: Record<string, string> = { code, prefix: answerPrefix(code), name, gateway: gatewayRoot, dir };
  const templates = join(gatewayRoot, 'templates', 'step-package');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n', { flag: 'wx' });
  const written = ['package.json'];
  for (const file of filesUnder(templates)) {
    // npm leaves a .gitignore out of packed packages: the template is named without its dot.
    const target = relative(templates, file).replace(/\.tmpl$/, '').replace(/^(gitignore|npmrc)$/, '.$1');
    const text = readFileSync(file, 'utf8').replace(/\{\{(\w+)\}\}/g, (m, key: string) => vars[key] ?? m);
    mkdirSync(dirname(join(dir, target)), { recursive: true });
    writeFileSync(join(dir, target), text, { flag: 'wx' });
    written.push(target);
  }
  return written.sort();
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((n) => (statSync(join(dir, n)).isDirectory() ? filesUnder(join(dir, n)) : [join(dir, n)]));
}
