import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { isDnsTarget, type CertDoc, type ClusterDoc } from './documents.js';
import type { CompiledTls, CompileIssue } from '../contracts/generation.js';
import type { SecretPolicy } from '../contracts/secrets.js';
import { mayName } from './secret-policy.js';
import { anySecure } from '../shared/target-url.js';

/**
 * A cluster's `tls` block: compiled, and checked as workers will use it. A `ca` must hold
 * certificates Node can read; the publishing tenant's client certificate must be named by
 * variables worker.json `secrets.env` allows it (before any is read, so a refusal says
 * nothing of whether one exists), be set, and pair a certificate with its key. Messages
 * carry Node's codes, never the variables' contents.
 */

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A `ca` that is no PEM names a `cert` of the tenant. */
const isCertName = (ca: string): boolean => !ca.includes('-----BEGIN');

/** `certs`: the tenant's `cert` entities, which `ca` and `clientCertificate` may name (a missing one is an issue, below). */
export function compileTls(tenant: string, tls: NonNullable<ClusterDoc['tls']>, certs: ReadonlyMap<string, CertDoc>): CompiledTls {
  const ca = tls.ca !== undefined && isCertName(tls.ca) ? certs.get(tls.ca)?.certificate : tls.ca;
  const cc = tls.clientCertificate;
  const named = typeof cc === 'string' ? certs.get(cc) : undefined;
  return {
    verify: tls.verify,
    ...(tls.serverName !== undefined ? { serverName: tls.serverName } : {}),
    ...(ca !== undefined ? { ca } : {}),
    ...(typeof cc === 'object' ? { clientCertificate: { ...cc } } : {}),
    ...(named ? { clientCertificate: { cert: `${tenant}/${cc as string}`, certificate: named.certificate, privateKey: named.privateKey } } : {}),
  };
}

export function clusterTlsIssues(tenant: string, name: string, c: ClusterDoc, certs: ReadonlyMap<string, CertDoc>, secrets: SecretPolicy | null, issues: CompileIssue[]): void {
  const tls = c.tls;
  if (!tls) return;
  const issue = (pointer: string, code: CompileIssue['code'], message: string) => issues.push({ kind: 'cluster', name, pointer, code, message });
  const targets = c.targets.map((t) => (typeof t === 'string' ? t : isDnsTarget(t) ? `${t.scheme}://${t.dns}` : t.address));
  if (!anySecure(targets)) issue('/tls', 'Compile.Cluster.Tls', 'tls applies to https:// targets only and this cluster has none; write its targets https://host:port or drop tls');
  if (tls.ca !== undefined && isCertName(tls.ca)) {
    if (!certs.has(tls.ca)) issue('/tls/ca', 'Compile.Cluster.Tls', `no cert ${tls.ca} in tenant ${tenant} (ca is PEM certificates or the name of a cert)`);
  } else if (tls.ca !== undefined) {
    const problem = caProblem(tls.ca);
    if (problem) issue('/tls/ca', 'Compile.Cluster.Tls', problem);
  }
  const cc = tls.clientCertificate;
  if (typeof cc === 'string') {
    // The cert's own checks (its key, its dates) are the cert's issues.
    if (!certs.has(cc)) issue('/tls/clientCertificate', 'Compile.Cluster.Tls', `no cert ${cc} in tenant ${tenant}`);
    return;
  }
  if (!cc || !secrets) return;
  const refs = [['certificateEnv', cc.certificateEnv], ['privateKeyEnv', cc.privateKeyEnv]] as const;
  const refused = refs.filter(([, env]) => !mayName(secrets, tenant, env));
  for (const [field] of refused) {
    issue(`/tls/clientCertificate/${field}`, 'Compile.Cluster.SecretNotAllowed', `this environment variable is not allowed for tenant ${tenant} (worker.json secrets.env lists the ones it may name)`);
  }
  if (refused.length) return;
  const unset = refs.filter(([, env]) => !process.env[env]);
  for (const [field, env] of unset) issue(`/tls/clientCertificate/${field}`, 'Compile.Cluster.Tls', `environment variable ${env} is not set`);
  if (unset.length) return;
  try {
    createSecureContext({ cert: process.env[cc.certificateEnv], key: process.env[cc.privateKeyEnv] });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    issue('/tls/clientCertificate', 'Compile.Cluster.Tls', `the client certificate and key cannot be used together (${code}): each variable must hold a PEM, the key the certificate's own`);
  }
}

/** Why `ca` is unusable, or null: it must hold at least one PEM certificate, each one readable. */
function caProblem(ca: string): string | null {
  const blocks = ca.match(PEM_CERT) ?? [];
  if (blocks.length === 0) return 'ca must hold PEM certificates (-----BEGIN CERTIFICATE-----)';
  for (const [i, pem] of blocks.entries()) {
    try {
      new X509Certificate(pem);
    } catch {
      return `certificate ${i + 1} of ca cannot be read`;
    }
  }
  return null;
}

/** The publishing tenant's clusters that do not verify their upstreams' certificates (dry-run warnings). */
export function unverifiedTlsWarnings(clusters: Record<string, { tls?: CompiledTls }>): CompileIssue[] {
  return Object.entries(clusters)
    .filter(([, c]) => c.tls?.verify === false)
    .map(([key]) => ({
      kind: 'cluster',
      name: key.slice(key.indexOf('/') + 1),
      pointer: '/tls/verify',
      code: 'Compile.Cluster.TlsUnverified' as const,
      message: "verify is false: the cluster's https targets' certificates are not checked, so anyone on the path can read and change its traffic",
    }));
}
