import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

// Type-only imports count: a cycle of types still ties two files' concepts together, and
// it becomes a runtime cycle the day one side needs a value. No exception is made for them.
const WORKER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'worker');

/** Every `import`/`export … from`, `import type`, side-effect import and `import('…')` type query. */
const SPECIFIERS = [/(?:^|[\s;])(?:import|export)\s+(?:[^;'"`]*?\sfrom\s*)?['"]([^'"]+)['"]/g, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** File -> the files under `dir` it imports by a relative specifier. */
function importGraph(dir: string): Map<string, string[]> {
  const files = tsFiles(dir);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const to = new Set<string>();
    for (const re of SPECIFIERS) {
      for (const m of text.matchAll(re)) {
        if (!m[1]!.startsWith('.')) continue;
        const target = normalize(join(dirname(file), m[1]!)).replace(/\.js$/, '.ts');
        if (known.has(target)) to.add(target);
      }
    }
    graph.set(file, [...to]);
  }
  return graph;
}

/** One cycle per strongly connected component (Tarjan), as the path `a -> b -> … -> a`. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = new Set<string>();
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.add(w);
    } while (w !== v);
    if (component.size > 1 || graph.get(v)!.includes(v)) found.push(pathBack(graph, component, v));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** A shortest path from `start` back to itself inside `component` (breadth first). */
function pathBack(graph: Map<string, string[]>, component: Set<string>, start: string): string[] {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of graph.get(v)!) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let at: string | undefined = v; at !== start && at !== undefined; at = from.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

const shown = (root: string, c: string[]) => c.map((f) => relative(root, f).split(sep).join('/')).join(' -> ');

test('no import cycle among the files under src/worker/ (type-only imports included)', () => {
  const graph = importGraph(WORKER);
  const edges = [...graph.values()].reduce((n, to) => n + to.length, 0);
  assert.ok(graph.size > 50 && edges > graph.size, `the graph was read (${graph.size} files, ${edges} imports)`);
  const found = cycles(graph).map((c) => shown(WORKER, c));
  assert.deepEqual(found, [], `import cycles under src/worker/:\n${found.join('\n')}`);
});

test('the check names a cycle, also one made of type-only imports', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-cycles-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'a.ts'), "import { b } from './b.js';\nexport const a = b;\n");
  writeFileSync(join(dir, 'b.ts'), "import type {\n  C,\n} from './c.js';\nexport const b: C | 1 = 1;\n");
  writeFileSync(join(dir, 'c.ts'), "export type C = typeof import('./a.js').a;\n");
  writeFileSync(join(dir, 'd.ts'), "import { a } from './a.js';\nexport const d = a;\n");
  assert.deepEqual(cycles(importGraph(dir)).map((c) => shown(dir, c)), ['a.ts -> b.ts -> c.ts -> a.ts']);
});
