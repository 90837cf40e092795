import type { CompileIssue } from '../contracts/generation.js';

/** Hosts one entity claims for its tenant: a route's `hosts`, or a (non-default tenant's) cert's. */
export interface HostClaim {
  tenant: string;
  kind: 'route' | 'cert';
  name: string;
  hosts: readonly string[] | null;
}

/**
 * Which tenant owns each host. A host (or `*.suffix`) named by routes of two tenants,
 * or a name of one tenant under another tenant's wildcard, is an issue: the data plane routes a request only among the routes of the tenant that
 * owns its host (unclaimed hosts: `default`), so no tenant can capture another's traffic.
 */
export function claimHosts(claims: readonly HostClaim[], issues: CompileIssue[], publishing: string): Record<string, string> {
  // Reported on the publishing tenant's route: it is that tenant's change that clashes
  // (claims among other tenants were accepted when they published; they are not its to fix).
  const clash = (a: HostClaim, b: HostClaim, message: string) => {
    const mine = a.tenant === publishing ? a : b.tenant === publishing ? b : null;
    if (mine) issues.push({ kind: mine.kind, name: mine.name, pointer: '/hosts', code: mine.kind === 'route' ? 'Compile.Route.HostConflict' : 'Compile.Cert.HostConflict', message });
  };
  const owners: Record<string, string> = {};
  const firstClaim = new Map<string, HostClaim>();
  for (const r of claims) {
    for (const h of r.hosts ?? []) {
      const prior = firstClaim.get(h);
      if (!prior) {
        firstClaim.set(h, r);
        owners[h] = r.tenant;
      } else if (prior.tenant !== r.tenant) {
        clash(prior, r, `host ${h} is claimed by tenant ${prior.tenant} (${prior.kind} ${prior.name}) and tenant ${r.tenant} (${r.kind} ${r.name})`);
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
        clash(broader, r, `host ${h} of tenant ${r.tenant} (${r.kind} ${r.name}) lies under *${name.slice(i)}, claimed by tenant ${broader.tenant} (${broader.kind} ${broader.name})`);
      }
    }
  }
  return owners;
}
