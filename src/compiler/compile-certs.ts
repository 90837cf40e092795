import { createPrivateKey, type X509Certificate } from 'node:crypto';
import type { CertDoc } from './documents.js';
import type { CompiledCert, CompileIssue } from '../contracts/generation.js';
import type { CompileIssueCode } from '../shared/errors.js';
import { certInfo, covers, leafCertificate } from './cert-info.js';
import { certKeyContext } from '../shared/secret-box.js';

const DEFAULT_TENANT = 'default';
const EXPIRY_WARNING_MS = 30 * 24 * 3_600_000;

/** The publishing tenant's own checks: the clock, and the way to open its stored keys. */
export interface CertChecks {
  now: number;
  openKey: (stored: string, context: string) => string;
}

/** A tenant's certificates, each with the hosts it serves (lower case). */
export interface TenantCert {
  id: string;
  name: string;
  hosts: string[];
  default: boolean;
  compiled: CompiledCert;
}


/**
 * One tenant's `cert` entities. Every tenant's are read (their names decide SNI); only the
 * publishing tenant's are checked against the clock and their keys (`own`), so another
 * tenant's expiring certificate never stops this publish.
 */
export function compileCerts(tenant: string, docs: ReadonlyMap<string, CertDoc>, own: CertChecks | null, issues: CompileIssue[], warnings: CompileIssue[]): TenantCert[] {
  const out: TenantCert[] = [];
  const served = new Map<string, string>();
  let defaults = 0;
  for (const [name, doc] of docs) {
    const issue = (pointer: string, code: CompileIssueCode, message: string, list = issues) => list.push({ kind: 'cert', name, pointer, code, message });
    let cert: X509Certificate;
    try {
      cert = leafCertificate(doc.certificate);
    } catch (err) {
      issue('/certificate', 'Compile.Cert.Invalid', `the certificate cannot be read: ${(err as Error).message}`);
      continue;
    }
    const info = certInfo(cert);
    const hosts = doc.hosts ? doc.hosts.map((h) => h.toLowerCase()) : info.dnsNames;
    if (hosts.length === 0 && !doc.hosts) issue('/hosts', 'Compile.Cert.Hosts', 'the certificate has no DNS names: list the hosts it serves, or hosts: [] for a cert only clusters name');
    hosts.forEach((h, i) => {
      if (!covers(info.dnsNames, h)) issue(`/hosts/${i}`, 'Compile.Cert.Hosts', `${h} is not among the certificate's names (${info.dnsNames.join(', ') || 'none'})`);
      const other = served.get(h);
      if (other !== undefined) issue(`/hosts/${i}`, 'Compile.Cert.HostConflict', `${h} is also served by cert ${other}`);
      served.set(h, name);
    });
    if (doc.default && (tenant !== DEFAULT_TENANT || ++defaults > 1)) {
      issue('/default', 'Compile.Cert.Default', tenant !== DEFAULT_TENANT ? `only the ${DEFAULT_TENANT} tenant may have a default certificate` : 'another certificate is already the default');
    }
    if (own) check(cert, doc.privateKey, certKeyContext(`${tenant}/${name}`), own, issue, (p, c, m) => issue(p, c, m, warnings));
    out.push({ id: `${tenant}/${name}`, name, hosts, default: doc.default === true, compiled: { certificate: doc.certificate, privateKey: doc.privateKey, fingerprint256: info.fingerprint256 } });
  }
  return out;
}

type Report = (pointer: string, code: CompileIssueCode, message: string) => void;

function check(cert: X509Certificate, storedKey: string, context: string, own: CertChecks, issue: Report, warn: Report): void {
  try {
    if (!cert.checkPrivateKey(createPrivateKey(own.openKey(storedKey, context)))) {
      issue('/privateKey', 'Compile.Cert.KeyMismatch', "the private key is not the certificate's");
    }
  } catch {
    // Never the error's text: it may quote the key.
    issue('/privateKey', 'Compile.Cert.Invalid', 'the private key cannot be read (or was sealed with another secrets.keyEnv key)');
  }
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  if (own.now < from || own.now > to) issue('/certificate', 'Compile.Cert.Expired', `the certificate is valid from ${cert.validFrom} to ${cert.validTo}`);
  else if (to - own.now < EXPIRY_WARNING_MS) warn('/certificate', 'Compile.Cert.Expiring', `the certificate expires on ${new Date(to).toISOString()}`);
}
