import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ALL_CODES, CLI_ERRORS, COMPILE_ISSUES, CONSOLE_ERRORS, ERRORS } from '../../src/shared/errors.js';

// Every code the product emits is defined once, in the registry src/shared/errors.ts
// exports: a code-shaped string literal in the sources that it does not hold fails here,
// and docs/reference.md's error-code tables must list exactly the registry's codes.

const ROOT = join(import.meta.dirname, '..', '..');
const FAMILIES = ['Svc', 'Compile', 'Cli', 'Console'];
/** A code in quotes or backticks: `'Svc.Data.NoRoute'`, "Cli.Input", `Compile.Route.Hosts`. */
const QUOTED_CODE = new RegExp(`['"\`]((?:${FAMILIES.join('|')})(?:\\.[A-Z][A-Za-z]*)+)`, 'g');
/** The registry's own tables, which define codes rather than emit them. */
const REGISTRY_FILES = new Set(['src/shared/svc-errors.ts', 'src/shared/compile-issue-codes.ts', 'src/shared/client-codes.ts']);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** Each code-shaped literal of the product's sources, with where it is. */
function emittedCodes(): { code: string; at: string }[] {
  const found: { code: string; at: string }[] = [];
  for (const file of [...sourceFiles('src'), ...sourceFiles('console/src')]) {
    if (REGISTRY_FILES.has(file)) continue;
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const m of line.matchAll(QUOTED_CODE)) found.push({ code: m[1]!, at: `${file}:${i + 1}` });
      });
  }
  return found;
}

function unregistered(found: { code: string; at: string }[]): string[] {
  return found.filter((f) => !ALL_CODES.has(f.code)).map((f) => `${f.code} at ${f.at}`);
}

test('every error code the sources emit is registered', () => {
  const found = emittedCodes();
  assert.ok(found.length > 50, `the scan found only ${found.length} codes: is the pattern still right?`);
  const missing = unregistered(found);
  assert.deepEqual(missing, [], `codes emitted but not in the error registry (src/shared/errors.ts): ${missing.join('; ')}`);
});

test('the scan catches an unregistered code', () => {
  const line = "return stepError('Svc.Data.Invented');";
  const found = [...line.matchAll(QUOTED_CODE)].map((m) => ({ code: m[1]!, at: 'probe.ts:1' }));
  assert.deepEqual(unregistered(found), ['Svc.Data.Invented at probe.ts:1']);
});

test('every registered code is emitted somewhere, and each is defined once, under its family', () => {
  const emitted = new Set(emittedCodes().map((f) => f.code));
  const unused = [...ALL_CODES.keys()].filter((c) => !emitted.has(c));
  assert.deepEqual(unused, [], `registered codes nothing emits: ${unused.join(', ')}`);
  const families: [string, object][] = [['Svc', ERRORS], ['Compile', COMPILE_ISSUES], ['Cli', CLI_ERRORS], ['Console', CONSOLE_ERRORS]];
  let total = 0;
  for (const [prefix, table] of families) {
    for (const code of Object.keys(table)) assert.ok(code.startsWith(`${prefix}.`), `${code} is in the ${prefix} table`);
    total += Object.keys(table).length;
  }
  assert.equal(ALL_CODES.size, total, 'a code is defined in two tables');
});

/** docs/reference.md's "Error codes" section: its table rows, as [codes, statuses] per row. */
function documentedRows(): { codes: string[]; statuses: number[] }[] {
  const doc = readFileSync(join(ROOT, 'docs', 'reference.md'), 'utf8');
  const start = doc.indexOf('\n## Error codes\n');
  assert.ok(start >= 0, 'docs/reference.md has an "Error codes" section');
  const end = doc.indexOf('\n## ', start + 1);
  const rows: { codes: string[]; statuses: number[] }[] = [];
  for (const line of doc.slice(start, end).split('\n')) {
    if (!line.startsWith('| `')) continue;
    const [first = '', second = ''] = line.split('|').slice(1);
    const codes = [...first.matchAll(QUOTED_CODE)].map((m) => m[1]!);
    const statuses = /^\s*\d+(\s*\/\s*\d+)*\s*$/.test(second) ? second.split('/').map((s) => Number(s.trim())) : [];
    rows.push({ codes, statuses });
  }
  return rows;
}

test('docs/reference.md lists every registered code once, with its status', () => {
  const rows = documentedRows();
  const listed = rows.flatMap((r) => r.codes);
  const twice = listed.filter((c, i) => listed.indexOf(c) !== i);
  assert.deepEqual(twice, [], `codes listed twice in the error-code tables: ${twice.join(', ')}`);
  const notRegistered = listed.filter((c) => !ALL_CODES.has(c));
  assert.deepEqual(notRegistered, [], `documented codes the registry does not hold: ${notRegistered.join(', ')}`);
  const undocumented = [...ALL_CODES.keys()].filter((c) => !listed.includes(c));
  assert.deepEqual(undocumented, [], `registered codes missing from docs/reference.md's error-code tables: ${undocumented.join(', ')}`);
  for (const { codes, statuses } of rows) {
    const svc = codes.filter((c) => c.startsWith('Svc.'));
    if (svc.length === 0) continue;
    assert.deepEqual(statuses, svc.map((c) => ERRORS[c as keyof typeof ERRORS].status), `the status column of ${svc.join(' / ')}`);
  }
  for (const { codes, statuses } of rows.filter((r) => r.codes[0]?.startsWith('Cli.'))) {
    assert.deepEqual(statuses, codes.map((c) => CLI_ERRORS[c as keyof typeof CLI_ERRORS].exit), `the exit column of ${codes.join(' / ')}`);
  }
});

test('every code the other docs name is registered', () => {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
  const stale: string[] = [];
  for (const file of files) {
    for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(QUOTED_CODE)) if (!ALL_CODES.has(m[1]!)) stale.push(`${m[1]} in ${file}`);
  }
  assert.deepEqual(stale, [], `docs name codes the registry does not hold: ${stale.join('; ')}`);
});
