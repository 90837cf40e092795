/**
 * What may be shown of a `cert` entity, everything but its private key: the `info` of a
 * cert in `config get`, read by the admin API from the certificate and shown by the console.
 */
export interface CertInfo {
  subject: string;
  issuer: string;
  /** The DNS names (subjectAltName), lower case. */
  dnsNames: string[];
  notBefore: string;
  notAfter: string;
  fingerprint256: string;
  keyType: string;
}
