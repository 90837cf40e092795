import type { CertDoc } from '../compiler/documents.js';
import { certInfo, leafCertificate, type CertInfo } from '../compiler/cert-info.js';
import { certKeyContext, isSealed, type SecretBox } from '../shared/secret-box.js';

/** What `config get|list` and the console show in place of a private key. */
export const WRITE_ONLY = '(write-only)';

/** A cert document as the store keeps it: the private key sealed when worker.json names a key (secrets.keyEnv). */
export function sealCertKey(doc: CertDoc, tenant: string, name: string, box: SecretBox | null): CertDoc {
  if (!box || isSealed(doc.privateKey)) return doc;
  return { ...doc, privateKey: box.seal(doc.privateKey, certKeyContext(`${tenant}/${name}`)) };
}

/** A stored cert document as the admin API shows it: never the key, and what the certificate says. */
export function certView(doc: unknown): unknown {
  if (doc === null || typeof doc !== 'object') return doc;
  const d = doc as Partial<CertDoc>;
  let info: CertInfo | null = null;
  try {
    info = typeof d.certificate === 'string' ? certInfo(leafCertificate(d.certificate)) : null;
  } catch {
    // shown without info; the compiler reports it
  }
  return { ...d, privateKey: WRITE_ONLY, info };
}
