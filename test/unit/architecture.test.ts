import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

// The forbidden arrows come from docs/architecture.md, so the doc and the check cannot drift apart.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(ROOT, 'src');
const DOC = 'docs/architecture.md';

function parts(): string[] {
  return readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
}

/** `from -> a|b` or `from -> * except a|b`, one arrow per line of the `forbidden-imports` block. */
function forbiddenArrows(): Map<string, Set<string>> {
  const doc = readFileSync(join(ROOT, DOC), 'utf8');
  const block = /```forbidden-imports\n([\s\S]*?)```/.exec(doc);
  assert.ok(block, `${DOC} has no forbidden-imports block`);
  const known = parts();
  const rules = new Map<string, Set<string>>();
  for (const raw of block[1]!.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const m = /^([a-z-]+)\s*->\s*(\*|[a-z|-]+)(?:\s+except\s+([a-z|-]+))?$/.exec(line);
    assert.ok(m, `${DOC}: cannot read the arrow line "${line}"`);
    const [, from, to, except] = m as unknown as [string, string, string, string | undefined];
    const left = except ? except.split('|') : [];
    const targets = to === '*' ? known.filter((p) => p !== from && !left.includes(p)) : to.split('|');
    for (const p of [from, ...targets, ...left]) assert.ok(known.includes(p), `${DOC}: "${p}" is not a folder under src/`);
    const set = rules.get(from) ?? new Set<string>();
    for (const t of targets) set.add(t);
    rules.set(from, set);
  }
  assert.ok(rules.size > 0, `${DOC}: the forbidden-imports block is empty`);
  return rules;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const STATIC = /(?:^|[\s;])(?:import|export)\s+(?:[^;'"`]*?\sfrom\s*)?['"]([^'"]+)['"]/g;
const TYPE_QUERY = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Relative specifiers of a file's imports, resolved to paths under the repository. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const re of [STATIC, TYPE_QUERY]) {
    for (const m of text.matchAll(re)) if (m[1]!.startsWith('.')) out.push(normalize(join(dirname(file), m[1]!)));
  }
  return out;
}

/** `src/<part>/…` -> part; null for a file outside src/ or directly in it. */
function partOf(path: string): string | null {
  const rel = relative(SRC, path).split(sep);
  return rel[0] === '..' || rel.length < 2 ? null : rel[0]!;
}

const show = (p: string) => relative(ROOT, p).split(sep).join('/').replace(/\.js$/, '.ts');

test('no file under src/ imports across a forbidden arrow (docs/architecture.md)', () => {
  const rules = forbiddenArrows();
  const violations: string[] = [];
  let crossing = 0;
  for (const file of tsFiles(SRC)) {
    const from = partOf(file);
    if (!from) continue;
    for (const target of importsOf(file)) {
      const to = partOf(target);
      if (!to || to === from) continue;
      crossing++;
      if (rules.get(from)?.has(to)) violations.push(`${show(file)} -> ${show(target)} (${from} -> ${to} is forbidden, ${DOC})`);
    }
  }
  assert.ok(crossing > 0, 'the scan found no import between parts: the pattern is broken');
  assert.deepEqual(violations, [], `forbidden imports:\n${violations.join('\n')}`);
});

/**
 * Packages only some places may import: uWebSockets.js an engine's own folder (the rest of
 * the worker talks to engine/contract.ts); node:http2 the node engine, the HTTP/2 upstream
 * client (worker/engine/upstream-h2/) and the session opener it shares with the health probes.
 */
const H2_PLACES = ['src/worker/engine/node/', 'src/worker/engine/upstream-h2/', 'src/shared/upstream-h2-session.ts'];
const ONLY_IN: Record<string, string[]> = { 'uWebSockets.js': ['src/worker/engine/uws/'], 'node:http2': H2_PLACES, http2: H2_PLACES };
/** `require('…')` and `createRequire(…)('…')` too: a loader that does not go through `import`. */
const REQUIRE = /\brequire(?:\.resolve)?\(\s*['"]([^'"]+)['"]\s*\)/g;

test('uWebSockets.js only in its engine\'s folder, node:http2 only in the node engine and the HTTP/2 upstream client (docs/architecture.md)', () => {
  const violations: string[] = [];
  const seen = new Map<string, number>();
  for (const file of tsFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const re of [STATIC, TYPE_QUERY, REQUIRE]) {
      for (const m of text.matchAll(re)) {
        const places = ONLY_IN[m[1]!];
        if (places === undefined) continue;
        seen.set(m[1]!, (seen.get(m[1]!) ?? 0) + 1);
        if (!places.some((p) => show(file).startsWith(p))) violations.push(`${show(file)} imports ${m[1]} (only ${places.join(', ')} may)`);
      }
    }
  }
  assert.ok((seen.get('uWebSockets.js') ?? 0) > 0 && (seen.get('node:http2') ?? 0) > 0, 'the scan missed the engines\' imports: the pattern is broken');
  assert.deepEqual(violations, [], violations.join('\n'));
});
