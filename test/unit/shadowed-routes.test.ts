import { test } from 'node:test';
import assert from 'node:assert/strict';
import { covers, impactWarnings } from '../../src/compiler/impact-warnings.js';
import type { CompiledRoute } from '../../src/contracts/generation.js';

/** The check as it was first written: every better-ranked route compared whole. */
const reference = (routes: readonly CompiledRoute[]) =>
  routes.flatMap((r, i) => {
    const w = routes.slice(0, i).find((s) => covers(s, r));
    return w ? [`${r.name}<${w.name}`] : [];
  });

test('shadowed routes: the prefix-first scan finds the same winners as comparing every pair', () => {
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const pick = <T>(xs: readonly T[]) => xs[rnd(xs.length)]!;
  // Prefixes that start one another in and out of case, Greek final sigma included (its lowercase depends on what follows).
  const parts = ['/a', '/A', '/ab', '/Ab', '/r1', '/r10', '/aΣ', '/aΣb', '/aσ', '/aς'];
  let total = 0;
  for (let round = 0; round < 50; round++) {
    const routes = Array.from({ length: 40 }, (_, i) => {
      const prefix = pick(parts) + (rnd(3) === 0 ? pick(parts) : '');
      return {
        name: `r${i}`,
        order: i,
        pathPrefix: prefix,
        caseSensitive: rnd(2) === 0,
        hosts: rnd(3) === 0 ? null : [pick(['a.example', 'b.example', '*.example'])],
        methods: rnd(3) === 0 ? null : [pick(['GET', 'POST'])],
        terminal: { type: 'direct' },
      } as unknown as CompiledRoute;
    });
    const found = impactWarnings(routes, [])
      .filter((w) => w.code === 'Compile.Route.Shadowed')
      .map((w) => `${w.name}<${/route (\S+) /.exec(w.message)![1]}`);
    assert.deepEqual(found, reference(routes), `round ${round}`);
    total += found.length;
  }
  assert.ok(total > 100, `the rounds had shadowed routes to find: ${total}`);
});
