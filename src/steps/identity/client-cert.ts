import * as v from 'valibot';
import { isIP } from 'node:net';
import { defineStep, type ClientCertificate } from '../step.js';
import { headerSafe, stepError } from '../reply.js';
import { normalFingerprint, sanEntry } from '../../shared/client-cert-names.js';

const HeaderName = v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/, 'must be a header name'), v.toLowerCase());
const Subject = v.pipe(v.string(), v.minLength(1), v.maxLength(1024));
const San = v.pipe(
  v.string(),
  v.regex(/^(DNS|URI|email|IP):.+$/, 'must be DNS:name, URI:uri, email:address or IP:address'),
  v.check((s) => !s.startsWith('IP:') || isIP(s.slice(3)) !== 0, 'IP: must be followed by an IP address'),
  v.maxLength(1024),
);
const Fingerprint = v.pipe(v.string(), v.regex(/^([0-9A-Fa-f]{64}|([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2})$/, 'must be a SHA-256 fingerprint: 64 hex digits, colons between bytes allowed'));
const List = <T extends v.GenericSchema<string, string>>(item: T) => v.optional(v.pipe(v.array(item), v.maxLength(1_000)), []);

/**
 * Requires a client certificate the TLS listener verified against worker.json's
 * `listen.tls.clientCertificates.ca`, optionally one of listed subjects, SANs or
 * fingerprints, and passes who it is upstream in headers the route owns (a client's own
 * copies never reach the upstream).
 */
export const clientCert = defineStep({
  code: 'client-cert',
  summary: 'Require a verified TLS client certificate (mTLS), optionally one of listed subjects, SANs or fingerprints',
  details:
    'The certificate is the one the TLS listener verified against worker.json `listen.tls.clientCertificates.ca` (node engine; `mode` `optional` lets a handshake without one through, so this step decides). ' +
    'No certificate, a certificate the CAs do not verify, the plain port, or a gateway without `clientCertificates`: 401 `Svc.Data.Unauthenticated`. ' +
    'With `subjects`, `sans` or `fingerprints`, the certificate must match one entry of any of them, else 403 `Svc.Data.Forbidden`; without them any verified certificate passes. ' +
    'Subjects are RFC 4514 strings, most specific first (`CN=billing,O=Acme`), compared exactly as the subject header shows them; SANs are `DNS:name` (any case), `URI:…`, `email:…` or `IP:address`; fingerprints are SHA-256 of the certificate (hex, colons allowed). ' +
    'The subject, issuer, SHA-256 fingerprint (64 lowercase hex digits) and SANs (`, `-separated; a comma inside one sent as %2C) go upstream in the four headers; a client\'s own values of them never do.',
  statuses: [
    { status: 401, when: 'no client certificate the listener verified (Svc.Data.Unauthenticated)' },
    { status: 403, when: 'a verified certificate none of subjects, sans or fingerprints lists (Svc.Data.Forbidden)' },
  ],
  example: { subjects: ['CN=billing,O=Acme'], sans: ['URI:spiffe://acme.test/billing'] },
  schema: v.strictObject({
    subjects: List(Subject),
    sans: List(San),
    fingerprints: List(Fingerprint),
    subjectHeader: v.optional(HeaderName, 'x-client-cert-subject'),
    issuerHeader: v.optional(HeaderName, 'x-client-cert-issuer'),
    fingerprintHeader: v.optional(HeaderName, 'x-client-cert-fingerprint'),
    sanHeader: v.optional(HeaderName, 'x-client-cert-san'),
  }),
  ownedHeaders: (s) => [s.subjectHeader, s.issuerHeader, s.fingerprintHeader, s.sanHeader],
  create(s) {
    const subjects = new Set(s.subjects);
    const sans = new Set(s.sans.map((e) => sanEntry(e.slice(0, e.indexOf(':')), e.slice(e.indexOf(':') + 1))));
    const fingerprints = new Set(s.fingerprints.map(normalFingerprint));
    const anyCert = subjects.size + sans.size + fingerprints.size === 0;
    const allowed = (c: ClientCertificate): boolean => anyCert || subjects.has(c.subject) || fingerprints.has(c.fingerprint256) || c.sans.some((e) => sans.has(e));
    const unauthenticated = stepError('Svc.Data.Unauthenticated', 'A client certificate the gateway verifies is required');
    const forbidden = stepError('Svc.Data.Forbidden', 'The client certificate is not one this route accepts');
    return (flow) => {
      const cert = flow.req.clientCert;
      if (cert === null || cert.verified !== true) return unauthenticated;
      if (!allowed(cert)) return forbidden;
      flow.vars.clientCert = cert;
      flow.vars.consumer = cert.subject;
      flow.setHeader(s.subjectHeader, headerSafe(cert.subject));
      flow.setHeader(s.issuerHeader, headerSafe(cert.issuer));
      flow.setHeader(s.fingerprintHeader, cert.fingerprint256);
      if (cert.sans.length > 0) flow.setHeader(s.sanHeader, cert.sans.map((e) => headerSafe(e).replaceAll(',', '%2C')).join(', '));
      return undefined;
    };
  },
});
