import type { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { ClientCertificate } from '../contracts/client-certificate.js';

/**
 * How a client certificate's names are written for steps, headers and settings lists: one
 * form everywhere, so a `client-cert` step's lists match what its headers show.
 */

/** A verified certificate as steps see it (contracts/client-certificate.ts). */
export function clientCertificateOf(x509: Pick<X509Certificate, 'subject' | 'issuer' | 'subjectAltName' | 'fingerprint256'>): ClientCertificate {
  return {
    subject: rfc4514(x509.subject),
    issuer: rfc4514(x509.issuer),
    sans: subjectAltNames(x509.subjectAltName),
    fingerprint256: normalFingerprint(x509.fingerprint256),
    verified: true,
  };
}

/**
 * node prints a name one RDN a line, in certificate order, values escaped as RFC 2253 says
 * (control bytes as \XX, so a value never holds a newline); RFC 4514 puts the most specific
 * RDN first, joined with ',', and a multi-valued RDN's parts with '+'.
 */
export function rfc4514(nodeName: string): string {
  if (nodeName === '') return '';
  return nodeName
    .split('\n')
    .reverse()
    .map((rdn) => rdn.replaceAll(' + ', '+'))
    .join(',');
}

const SAN_TYPES: Record<string, string> = { DNS: 'DNS', URI: 'URI', email: 'email', 'IP Address': 'IP' };

/**
 * node's subjectAltName text (`DNS:a.test, URI:spiffe://x, IP Address:127.0.0.1`) as a list.
 * A value with a comma or quote comes JSON-quoted (node ≥ 17.3.1), so a crafted name cannot
 * pass for two entries. Kinds other than DNS, URI, email and IP are kept as node names them.
 */
export function subjectAltNames(text: string | undefined): string[] {
  const out: string[] = [];
  if (!text) return out;
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(':', i);
    if (colon < 0) break;
    const kind = text.slice(i, colon);
    let value: string;
    let next: number;
    if (text[colon + 1] === '"') {
      next = quotedEnd(text, colon + 1);
      value = JSON.parse(text.slice(colon + 1, next)) as string;
    } else {
      const comma = text.indexOf(', ', colon + 1);
      next = comma < 0 ? text.length : comma;
      value = text.slice(colon + 1, next);
    }
    out.push(sanEntry(SAN_TYPES[kind] ?? kind, value));
    i = next + 2;
  }
  return out;
}

/** One SAN as `TYPE:value`: DNS names lower case, IPv6 compressed (node prints it in full). */
export function sanEntry(type: string, value: string): string {
  if (type === 'DNS') return `DNS:${value.toLowerCase()}`;
  if (type === 'IP' && isIP(value) === 6) return `IP:${new URL(`http://[${value}]/`).hostname.slice(1, -1)}`;
  return `${type}:${value}`;
}

/** A SHA-256 fingerprint as 64 lowercase hex digits, from either that or node's `AB:CD:…`. */
export function normalFingerprint(f: string): string {
  return f.replaceAll(':', '').toLowerCase();
}

/** The index just past a JSON string starting at `start`. */
function quotedEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}
