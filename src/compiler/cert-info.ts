import { X509Certificate } from 'node:crypto';
import type { CertInfo } from '../contracts/certs.js';

export type { CertInfo };

/** The leaf (first) certificate of a PEM chain, read; throws when it is not one. */
export function leafCertificate(chain: string): X509Certificate {
  const end = chain.indexOf('-----END CERTIFICATE-----');
  if (end === -1) throw new Error('no PEM certificate');
  return new X509Certificate(chain.slice(0, end + '-----END CERTIFICATE-----'.length));
}

export function certInfo(cert: X509Certificate): CertInfo {
  return {
    subject: cert.subject.replace(/\n/g, ', '),
    issuer: cert.issuer.replace(/\n/g, ', '),
    dnsNames: dnsNames(cert),
    notBefore: new Date(cert.validFrom).toISOString(),
    notAfter: new Date(cert.validTo).toISOString(),
    fingerprint256: cert.fingerprint256,
    keyType: cert.publicKey.asymmetricKeyType ?? 'unknown',
  };
}

function dnsNames(cert: X509Certificate): string[] {
  const san = cert.subjectAltName ?? '';
  return san
    .split(/,\s*/)
    .filter((e) => e.startsWith('DNS:'))
    .map((e) => e.slice(4).toLowerCase());
}

/** Whether a certificate with `names` serves `host` (exact, or one label under `*.suffix`); `host` may itself be `*.suffix`. */
export function covers(names: readonly string[], host: string): boolean {
  const h = host.toLowerCase();
  if (names.includes(h)) return true;
  if (h.startsWith('*.')) return false;
  const dot = h.indexOf('.');
  return dot > 0 && names.includes(`*${h.slice(dot)}`);
}
