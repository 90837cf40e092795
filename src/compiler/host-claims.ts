import type { CompiledRoute, CompileIssue } from './generation.js';

/**
 * Which tenant owns each host. A host (or `*.suffix`) named by routes of two tenants is
 * an issue: the data plane routes a request only among the routes of the tenant that
 * owns its host (unclaimed hosts: `default`), so no tenant can capture another's traffic.
 */
export function claimHosts(routes: readonly CompiledRoute[], issues: CompileIssue[]): Record<string, string> {
  const owners: Record<string, string> = {};
  const firstClaim = new Map<string, CompiledRoute>();
  for (const r of routes) {
    for (const h of r.hosts ?? []) {
      const prior = firstClaim.get(h);
      if (!prior) {
        firstClaim.set(h, r);
        owners[h] = r.tenant;
      } else if (prior.tenant !== r.tenant) {
        issues.push({
          kind: 'route',
          name: r.name,
          pointer: '/hosts',
          code: 'Compile.Route.HostConflict',
          message: `host ${h} is claimed by tenant ${prior.tenant} (route ${prior.name}) and tenant ${r.tenant}`,
        });
      }
    }
  }
  return owners;
}
