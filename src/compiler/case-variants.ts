import type { CompiledRoute, CompiledStep, CompileIssue } from '../contracts/generation.js';
import { coversHost, prefixMatches } from '../shared/route-match.js';

const AUTH_STEPS: ReadonlySet<string> = new Set(['key-auth', 'basic-auth', 'jwt-auth', 'forward-auth', 'oauth-introspection', 'oidc-login', 'client-cert']);

/**
 * Warnings (not issues: the upstream may well match case-sensitively) for protected
 * prefixes that a case variant slips past: route `admin` {pathPrefix: /admin-api,
 * key-auth} beside a catch-all sends `/ADMIN-API` to the catch-all without a key, and an
 * upstream that ignores case (Express's default router) serves it as its admin API.
 * `routes`: one tenant's, ranked (rank 0 first).
 */
export function caseVariantWarnings(routes: readonly CompiledRoute[]): CompileIssue[] {
  const warnings: CompileIssue[] = [];
  for (const p of routes) {
    if (!p.caseSensitive || !isProtected(p)) continue;
    const variant = p.pathPrefix.toUpperCase();
    if (variant === p.pathPrefix) continue; // no letters: no case variant
    // The route a request for the variant reaches on P's hosts and methods: the best ranked that matches it.
    const winner = routes.find((r) => r !== p && prefixMatches(r, variant) && overlap(r.hosts, p.hosts, coversHost) && overlap(r.methods, p.methods, (a, b) => a === b));
    if (winner === undefined || winner.terminal.type !== 'cluster' || isProtected(winner)) continue;
    warnings.push({
      kind: 'route',
      name: p.name,
      pointer: '/caseSensitive',
      code: 'Compile.Route.CaseVariant',
      message: `\`${variant}\` reaches route ${winner.name} without auth; set caseSensitive: false if the upstream ignores case`,
    });
  }
  return warnings;
}

/** A cluster route whose chain refuses a request without credentials. */
function isProtected(r: CompiledRoute): boolean {
  return r.terminal.type === 'cluster' && chainProtects(r.terminal.steps);
}

function chainProtects(steps: readonly CompiledStep[]): boolean {
  return steps.some((s) => {
    if (s.kind === 'step') return AUTH_STEPS.has(s.code) && !s.continue; // a Continue node lets refusals through
    // `all`: any member's refusal refuses; `any` and `first`: a passing member decides, so every member must authenticate.
    return s.merge === 'all' ? s.members.some(chainProtects) : s.members.every(chainProtects);
  });
}

/** Two lists (null: every value) that share a value. */
function overlap(a: readonly string[] | null, b: readonly string[] | null, same: (x: string, y: string) => boolean): boolean {
  return a === null || b === null || a.some((x) => b.some((y) => same(x, y) || same(y, x)));
}
