import type { CompiledRoute, CompileIssue } from '../contracts/generation.js';

/**
 * Which tenant owns each host. A host (or `*.suffix`) named by routes of two tenants,
 * or a name of one tenant under another tenant's wildcard, is an issue: the data plane routes a request only among the routes of the tenant that
 * owns its host (unclaimed hosts: `default`), so no tenant can capture another's traffic.
 */
export function claimHosts(routes: readonly CompiledRoute[], issues: CompileIssue[], publishing: string): Record<string, string> {
  // Reported on the publishing tenant's route: it is that tenant's change that clashes
  // (claims among other tenants were accepted when they published; they are not its to fix).
  const clash = (a: CompiledRoute, b: CompiledRoute, message: string) => {
    const mine = a.tenant === publishing ? a : b.tenant === publishing ? b : null;
    if (mine) issues.push({ kind: 'route', name: mine.name, pointer: '/hosts', code: 'Compile.Route.HostConflict', message });
  };
  const owners: Record<string, string> = {};
  const firstClaim = new Map<string, CompiledRoute>();
  for (const r of routes) {
    for (const h of r.hosts ?? []) {
      const prior = firstClaim.get(h);
      if (!prior) {
        firstClaim.set(h, r);
        owners[h] = r.tenant;
      } else if (prior.tenant !== r.tenant) {
        clash(prior, r, `host ${h} is claimed by tenant ${prior.tenant} (route ${prior.name}) and tenant ${r.tenant} (route ${r.name})`);
      }
    }
  }
  // A wildcard covers every name below it: `*.example.com` of one tenant and
  // `api.example.com` (or `*.api.example.com`) of another overlap, and the narrower claim
  // would take the other tenant's traffic for that name.
  for (const [h, r] of firstClaim) {
    const name = h.startsWith('*.') ? h.slice(2) : h;
    for (let i = name.indexOf('.'); i !== -1; i = name.indexOf('.', i + 1)) {
      const broader = firstClaim.get(`*${name.slice(i)}`);
      if (broader && broader.tenant !== r.tenant) {
        clash(broader, r, `host ${h} of tenant ${r.tenant} (route ${r.name}) lies under *${name.slice(i)}, claimed by tenant ${broader.tenant} (route ${broader.name})`);
      }
    }
  }
  return owners;
}
