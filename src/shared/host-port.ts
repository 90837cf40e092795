import { isIP } from 'node:net';

/**
 * `host[:port]` split at its port: a bracketed IPv6 address (`[::1]:80`, host `::1`), a
 * name or IPv4 address with at most one colon, or a bare IPv6 address (more than one
 * colon, no port). The one splitter for every host:port the gateway reads: the Host
 * header (routes, https-only), X-Forwarded-For hops, cluster targets, span attributes.
 * null when the brackets are open or the port is not 1-5 digits up to 65535.
 */
export function splitHostPort(s: string): { host: string; port: number | null } | null {
  let host: string;
  let rest: string;
  if (s.charCodeAt(0) === 0x5b /* [ */) {
    const end = s.indexOf(']');
    if (end === -1) return null;
    host = s.slice(1, end);
    rest = s.slice(end + 1);
  } else {
    const colon = s.indexOf(':');
    if (colon === -1) return { host: s, port: null };
    if (s.indexOf(':', colon + 1) !== -1) return { host: s, port: null };
    host = s.slice(0, colon);
    rest = s.slice(colon);
  }
  if (rest === '') return { host, port: null };
  if (!/^:\d{1,5}$/.test(rest)) return null;
  const port = Number(rest.slice(1));
  return port <= 65535 ? { host, port } : null;
}

/** `host:port` with an IPv6 address in brackets. */
export function joinHostPort(host: string, port: number): string {
  return `${bracketed(host)}:${port}`;
}

/** A host as it is written before a port or in a URL: an IPv6 address in brackets. */
export function bracketed(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** `ip:port` or `[ipv6]:port`, as worker.json's `admin.listen` takes it; null for anything else. */
export function parseHostPort(s: string): { host: string; port: number } | null {
  const hp = splitHostPort(s);
  if (hp === null || hp.port === null || hp.port < 1 || isIP(hp.host) === 0) return null;
  return { host: hp.host, port: hp.port };
}

/**
 * A target's host and port as undici will connect to them: undici reads its origin with
 * the WHATWG URL parser, which reads `127.1` and `2130706433` as 127.0.0.1 (no lookup is
 * made then), so the same parser decides here.
 */
export function urlHostPort(target: string): { host: string; port: number } {
  const u = new URL(`http://${target}`);
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return { host, port: u.port === '' ? 80 : Number(u.port) };
}

const WILDCARDS = new Set(['0.0.0.0', '::']);

/** Two listen addresses a port could not be bound on twice: the same, or either is a wildcard. */
export function addressesOverlap(a: string, b: string): boolean {
  return a === b || WILDCARDS.has(a) || WILDCARDS.has(b);
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host) || /^::ffff:127\./i.test(host);
}
