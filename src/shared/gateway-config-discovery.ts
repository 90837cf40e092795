import * as v from 'valibot';
import { isIP } from 'node:net';

/** `ip` or `ip:port` (IPv6 `[ip]:port`), as node:dns setServers takes them. */
function resolverAddress(s: string): boolean {
  if (isIP(s) !== 0) return true;
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(s);
  if (!m) return false;
  const ip = m[1] ?? m[2]!;
  const port = Number(m[3]);
  return isIP(ip) !== 0 && port >= 1 && port <= 65_535;
}

/**
 * worker.json `discovery` (docs/reference.md "DNS targets"): the DNS servers the supervisor
 * asks for clusters' `{dns}` targets. Absent: the system's (/etc/resolv.conf).
 */
export const DiscoverySchema = v.optional(
  v.strictObject({
    resolvers: v.optional(
      v.pipe(
        v.array(v.pipe(v.string(), v.check(resolverAddress, 'must be an IP address, or ip:port ([ipv6]:port)'))),
        v.minLength(1, 'needs at least one server (leave discovery out for the system resolver)'),
        v.maxLength(8, 'at most 8 servers'),
      ),
    ),
  }),
  {},
);

export type DiscoveryConfig = v.InferOutput<typeof DiscoverySchema>;
