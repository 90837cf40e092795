import type { CompiledRoute, CompiledServerTls, CompiledStep, CompileIssue } from '../contracts/generation.js';
import type { TenantCert } from './compile-certs.js';
import { covers } from './cert-info.js';

/**
 * What the TLS listener serves, from every tenant's certificates: the default tenant's
 * first, so a tenant's own certificate for a name wins over the operator's (other tenants
 * cannot overlap: their names are claims, checked like route hosts). null without any.
 */
export function compileServerTls(byTenant: ReadonlyMap<string, TenantCert[]>, defaultTenant: string): CompiledServerTls | null {
  const tls: CompiledServerTls = { certs: {}, hosts: {} };
  const order = [...byTenant.keys()].sort((a, b) => (a === defaultTenant ? -1 : b === defaultTenant ? 1 : a.localeCompare(b)));
  for (const tenant of order) {
    for (const c of byTenant.get(tenant)!) {
      tls.certs[c.id] = c.compiled;
      for (const h of c.hosts) tls.hosts[h] = c.id;
      if (c.default) tls.default = c.id;
    }
  }
  return Object.keys(tls.certs).length ? tls : null;
}

/** The publishing tenant's route hosts no certificate serves on the TLS port: warnings. */
export function certHostWarnings(routes: readonly CompiledRoute[], tls: CompiledServerTls | null): CompileIssue[] {
  const names = Object.keys(tls?.hosts ?? {});
  const out: CompileIssue[] = [];
  for (const r of routes) {
    (r.hosts ?? []).forEach((h, i) => {
      if (!covers(names, h)) {
        out.push({ kind: 'route', name: r.name, pointer: `/hosts/${i}`, code: 'Compile.Tls.NoCertificate', message: `no certificate serves ${h} on the TLS port${tls?.default ? ' (it gets the default certificate)' : ' (its handshakes are refused)'}` });
      }
    });
  }
  return out;
}

/**
 * The publishing tenant's routes that run `client-cert` where worker.json's TLS listener asks
 * for no client certificate (no TLS port, or no `clientCertificates`): each would answer 401
 * to every request. A warning, not an issue: the generation may be followed by fleet nodes
 * whose worker.json asks, and the step fails closed where none does.
 */
export function clientCertWarnings(routes: readonly CompiledRoute[], asked: boolean): CompileIssue[] {
  if (asked) return [];
  const uses = (steps: readonly CompiledStep[]): boolean => steps.some((s) => (s.kind === 'step' ? s.code === 'client-cert' : s.members.some(uses)));
  return routes
    .filter((r) => r.terminal.type === 'cluster' && uses(r.terminal.steps))
    .map((r) => ({ kind: 'route', name: r.name, pointer: '/steps', code: 'Compile.Tls.NoClientCertificates' as const, message: 'the route runs client-cert, and worker.json listen.tls.clientCertificates is not set on this gateway: no request has a verified client certificate, so every one is answered 401' }));
}
