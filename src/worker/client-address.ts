import { hopAddress } from '../shared/cidr.js';

/**
 * Headers in which a client names itself or the way it came. From a peer that is not a
 * trusted proxy they are dropped when the request is read, so no step, preview, mirror
 * copy, sub-request or upstream sees them; the gateway sets X-Forwarded-* itself.
 */
export const IDENTITY_HEADERS: ReadonlySet<string> = new Set([
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-port',
  'forwarded',
  'x-real-ip',
  'true-client-ip',
  'x-client-ip',
]);

/**
 * Whether `name` (lower case) is one of IDENTITY_HEADERS. Asked of every header of every
 * request: a look at one or two characters ('x-f', 'x-r', 'x-c', 'f', 't' start them all)
 * turns most names away before the Set is asked.
 */
export function isIdentityHeader(name: string): boolean {
  const c = name.charCodeAt(0);
  if (c === 120) {
    const d = name.charCodeAt(2);
    if (d !== 102 && d !== 114 && d !== 99) return false;
  } else if (c !== 102 && c !== 116) return false;
  return IDENTITY_HEADERS.has(name);
}

/**
 * The client's address, decided as nginx's real_ip (with real_ip_recursive) and Envoy's
 * trusted hops do: the socket peer, unless `trusted` names it; then `chain` (every
 * X-Forwarded-For line, joined) is read from the right, trusted hops are skipped, and the
 * first hop that is not trusted is the client; every hop trusted: the left-most. A hop
 * that is not an address (a port or brackets around it are fine) ends the walk: the
 * address read last, to its right, is the client (or the peer), so the answer is always
 * one a trusted hop reported, never what an untrusted one wrote.
 */
export function clientAddress(peer: string, chain: string | undefined, trusted: (ip: string) => boolean): string {
  if (chain === undefined || !trusted(peer)) return peer;
  let client = peer;
  let end = chain.length;
  while (end > 0) {
    const start = chain.lastIndexOf(',', end - 1) + 1;
    const hop = chain.slice(start, end);
    end = start - 1;
    if (hop.trim() === '') continue; // an empty list element (RFC 9110 §5.6.1)
    const ip = hopAddress(hop);
    if (ip === null) return client;
    client = canonical(ip);
    if (!trusted(client)) return client;
  }
  return client;
}

/** An IPv4-mapped IPv6 hop as dotted IPv4 and IPv6 in lower case: the forms the socket peer takes, so one client is one rate-limit key. */
function canonical(ip: string): string {
  if (!ip.includes(':')) return ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return mapped ? mapped[1]! : ip.toLowerCase();
}
