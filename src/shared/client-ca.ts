import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const EXPIRY_WARNING_MS = 30 * 24 * 3_600_000;

/** worker.json `listen.tls.clientCertificates.ca` read and checked: the PEM text, or why it cannot be used. */
export type ClientCa = { ok: true; pem: string; warnings: string[] } | { ok: false; message: string };

/**
 * The CAs client certificates must chain to: PEM text in worker.json, or a PEM file (relative
 * to worker.json's folder), read once at load. Operator-owned on purpose: a trust root of the
 * shared listener must not change with a tenant's publish (cert entities are tenants').
 */
export function readClientCa(ca: string, baseDir: string, now = Date.now()): ClientCa {
  let text = ca;
  if (!ca.includes('-----BEGIN')) {
    const file = isAbsolute(ca) ? ca : resolve(baseDir, ca);
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      // A cert entity's name lands here too: say what `ca` takes.
      return { ok: false, message: `cannot read the CA file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (ca is PEM text or the path of a PEM file; cert entities cannot be CAs)` };
    }
  }
  // A key beside the CA certificate has no business on a gateway that only verifies with it.
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) return { ok: false, message: 'holds a private key: give the CA certificates alone' };
  const blocks = text.match(PEM_CERT) ?? [];
  if (blocks.length === 0) return { ok: false, message: 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)' };
  const warnings: string[] = [];
  for (const [i, block] of blocks.entries()) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch (err) {
      return { ok: false, message: `certificate ${i + 1} cannot be read: ${(err as Error).message}` };
    }
    const name = cert.subject.split('\n').reverse().join(',');
    if (!cert.ca) return { ok: false, message: `certificate ${i + 1} (${name}) is not a CA (basicConstraints CA:TRUE)` };
    const to = Date.parse(cert.validTo);
    if (now < Date.parse(cert.validFrom) || now > to) return { ok: false, message: `certificate ${i + 1} (${name}) is valid from ${cert.validFrom} to ${cert.validTo}` };
    if (to - now < EXPIRY_WARNING_MS) warnings.push(`listen.tls.clientCertificates.ca: ${name} expires on ${new Date(to).toISOString()}`);
  }
  return { ok: true, pem: blocks.join('\n') + '\n', warnings };
}
