import type { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { ClientCertificate } from '../../../contracts/client-certificate.js';

/** What the engine reads of a client's TLS socket (h2: its session's socket). */
export interface PeerSocket {
  readonly encrypted?: boolean;
  readonly authorized?: boolean;
  getPeerX509Certificate?(): X509Certificate | undefined;
}

/**
 * The verified client certificate of each TLS connection, read when a route first asks and
 * kept while the connection lives: an h2 session's streams and an HTTP/1.1 connection's
 * requests parse it once. Routes that never ask cost nothing.
 */
export class PeerIdentities {
  private readonly seen = new WeakMap<object, ClientCertificate | null>();

  of(socket: PeerSocket | null | undefined): ClientCertificate | null {
    if (!socket?.encrypted) return null;
    let found = this.seen.get(socket);
    if (found === undefined) {
      // `authorized`: the chain verified against the configured CAs. An optional-mode
      // handshake with an unverified certificate completes, but its certificate counts for nothing.
      const x509 = socket.authorized === true ? socket.getPeerX509Certificate?.() : undefined;
      found = x509 ? clientCertificateOf(x509) : null;
      this.seen.set(socket, found);
    }
    return found;
  }
}

/** A verified certificate as steps see it (contracts/client-certificate.ts). */
export function clientCertificateOf(x509: Pick<X509Certificate, 'subject' | 'issuer' | 'subjectAltName' | 'fingerprint256'>): ClientCertificate {
  return {
    subject: rfc4514(x509.subject),
    issuer: rfc4514(x509.issuer),
    sans: subjectAltNames(x509.subjectAltName),
    fingerprint256: x509.fingerprint256.replaceAll(':', '').toLowerCase(),
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
      const end = quotedEnd(text, colon + 1);
      value = JSON.parse(text.slice(colon + 1, end)) as string;
      next = end;
    } else {
      const comma = text.indexOf(', ', colon + 1);
      next = comma < 0 ? text.length : comma;
      value = text.slice(colon + 1, next);
    }
    const type = SAN_TYPES[kind] ?? kind;
    out.push(`${type}:${type === 'IP' ? compressIp(value) : value}`);
    i = next + 2;
  }
  return out;
}

/** The index just past a JSON string starting at `start`. */
function quotedEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** node prints IPv6 SANs uncompressed (`0:0:0:0:0:0:0:1`); lists name them as people write them (`::1`). */
function compressIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}
