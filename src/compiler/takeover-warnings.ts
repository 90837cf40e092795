import type { CompiledRoute, CompileIssue } from '../contracts/generation.js';
import { coversHost } from '../shared/route-match.js';
import { covers } from './impact-warnings.js';

type Match = Pick<CompiledRoute, 'name' | 'order' | 'pathPrefix' | 'hosts' | 'methods' | 'caseSensitive'>;

/**
 * For each route the plan adds or whose match changes, the served routes whose requests it
 * will take: they overlap (prefix, hosts, methods), it ranks before them, and they serve now
 * (no route ranked before them covers them). `before`: the tenant's routes as served,
 * `after`: as planned, both ranked. A warning each; they stop nothing.
 */
export function takeoverWarnings(before: readonly CompiledRoute[], after: readonly CompiledRoute[]): CompileIssue[] {
  const was = new Map(before.map((r) => [r.name, r]));
  const out: CompileIssue[] = [];
  after.forEach((r, rank) => {
    const old = was.get(r.name);
    if (old && sameMatch(old, r)) return;
    for (const victim of after.slice(rank + 1)) {
      const served = was.get(victim.name);
      if (!served || !overlap(r, served)) continue;
      const oldRank = before.indexOf(served);
      if (before.slice(0, oldRank).some((s) => covers(s, served))) continue; // shadowed: it serves nothing now
      if (old && before.indexOf(old) < oldRank && overlap(old, served)) continue; // it already ranked first there
      out.push({ kind: 'route', name: r.name, pointer: '/pathPrefix', code: 'Compile.Route.TakesOver', message: `takes over requests route ${victim.name} serves now: ${region(r, served)}` });
    }
  });
  return out;
}

function sameMatch(a: Match, b: Match): boolean {
  return a.order === b.order && a.pathPrefix === b.pathPrefix && a.caseSensitive === b.caseSensitive && JSON.stringify(a.hosts) === JSON.stringify(b.hosts) && JSON.stringify(a.methods) === JSON.stringify(b.methods);
}

/** The hosts two lists share (null: both match any host). */
function sharedHosts(a: Match, b: Match): string[] | null {
  if (a.hosts === null) return b.hosts;
  if (b.hosts === null) return a.hosts;
  return a.hosts.filter((x) => b.hosts!.some((y) => coversHost(x, y) || coversHost(y, x)));
}

/** The methods two lists share (null: both match any method). */
function sharedMethods(a: Match, b: Match): string[] | null {
  if (a.methods === null) return b.methods;
  if (b.methods === null) return a.methods;
  return a.methods.filter((m) => b.methods!.includes(m));
}

function overlap(a: Match, b: Match): boolean {
  const fold = !a.caseSensitive || !b.caseSensitive;
  const [p, q] = fold ? [a.pathPrefix.toLowerCase(), b.pathPrefix.toLowerCase()] : [a.pathPrefix, b.pathPrefix];
  if (!p.startsWith(q) && !q.startsWith(p)) return false;
  return sharedHosts(a, b)?.length !== 0 && sharedMethods(a, b)?.length !== 0;
}

/** The requests both match, in words: the longer prefix, the shared hosts and methods. */
function region(a: Match, b: Match): string {
  const prefix = a.pathPrefix.length >= b.pathPrefix.length ? a.pathPrefix : b.pathPrefix;
  const hosts = sharedHosts(a, b);
  const methods = sharedMethods(a, b);
  return `paths under ${JSON.stringify(prefix || '/')}${hosts ? ` on ${hosts.join(', ')}` : ''}${methods ? ` for ${methods.join(', ')}` : ''}`;
}
