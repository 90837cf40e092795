/**
 * A client certificate the TLS listener verified against worker.json's
 * `listen.tls.clientCertificates.ca`, as the engine gives it to steps (StepRequest.clientCert).
 * Only a verified one is ever given: an optional-mode handshake with a certificate the CAs
 * do not verify gives none.
 */
export interface ClientCertificate {
  /** RFC 4514 (most specific RDN first): `CN=svc-a,O=Acme,C=DE`. */
  readonly subject: string;
  /** The issuer, RFC 4514. */
  readonly issuer: string;
  /** subjectAltName entries as `DNS:name`, `URI:spiffe://…`, `email:a@b`, `IP:10.0.0.1` (IPv6 compressed). */
  readonly sans: readonly string[];
  /** SHA-256 of the certificate (DER), 64 lowercase hex digits. */
  readonly fingerprint256: string;
  readonly verified: true;
}
