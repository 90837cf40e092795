import { isIP } from 'node:net';

/** `ip:port` or `[ipv6]:port`, as worker.json's `admin.listen` takes it; null for anything else. */
export function parseHostPort(s: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(s);
  if (!m) return null;
  const host = (m[1] ?? m[2]) as string;
  const port = Number(m[3]);
  if (isIP(host) === 0 || port < 1 || port > 65535) return null;
  return { host, port };
}

const WILDCARDS = new Set(['0.0.0.0', '::']);

/** Two listen addresses a port could not be bound on twice: the same, or either is a wildcard. */
export function addressesOverlap(a: string, b: string): boolean {
  return a === b || WILDCARDS.has(a) || WILDCARDS.has(b);
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host) || /^::ffff:127\./i.test(host);
}
