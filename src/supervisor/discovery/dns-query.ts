import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { DiscoverySource } from '../../contracts/discovery.js';
import { DISCOVERY_MAX_ADDRESSES } from '../../contracts/discovery.js';
import { joinHostPort } from '../../shared/host-port.js';

/** One address an answer gave, before the upstream policy: the IP, its port, and the SRV record's weight and priority. */
export interface Answered {
  ip: string;
  port: number;
  weight?: number;
  priority?: number;
}

export interface Answer {
  addresses: Answered[];
  /** The records' TTLs in seconds (empty: none known). */
  ttls: number[];
}

/** How long one query waits for the server, and how many times it is sent (node's c-ares options). */
export const DNS_TIMEOUT_MS = 2_000;
export const DNS_TRIES = 2;

/**
 * The node's DNS client for discovery: worker.json `discovery.resolvers` (`ip` or `ip:port`),
 * else the system's (/etc/resolv.conf). Queries go straight to the servers (c-ares), not
 * through getaddrinfo, so the records' TTLs are known.
 */
export function discoveryResolver(servers: readonly string[] | undefined): Resolver {
  const r = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES });
  if (servers?.length) r.setServers([...servers]);
  return r;
}

/** `host:port` of an answered address (IPv6 in brackets). */
export const answeredHostPort = (a: Answered): string => joinHostPort(a.ip, a.port);

/**
 * A source's addresses: its A or AAAA records with the source's port, or its SRV records,
 * each record's target resolved (A, else AAAA) to the addresses that take its port, weight
 * and priority. A failure (NXDOMAIN, no records, timeout, refused) rejects with node's error
 * (its `code` is what `cluster health` shows); an SRV target that does not resolve is left
 * out while another does.
 */
export async function queryDns(resolver: Resolver, s: DiscoverySource): Promise<Answer> {
  if (s.type === 'A' || s.type === 'AAAA') {
    const recs = s.type === 'A' ? await resolver.resolve4(s.name, { ttl: true }) : await resolver.resolve6(s.name, { ttl: true });
    return { addresses: recs.slice(0, DISCOVERY_MAX_ADDRESSES).map((r) => ({ ip: r.address, port: s.port! })), ttls: recs.map((r) => r.ttl) };
  }
  const srv = await resolver.resolveSrv(s.name);
  const ttls: number[] = [];
  const hosts = new Map<string, Promise<string[]>>();
  const ipsOf = (host: string): Promise<string[]> => {
    let p = hosts.get(host);
    if (!p) {
      p = isIP(host) !== 0 ? Promise.resolve([host]) : hostAddresses(resolver, host, ttls);
      hosts.set(host, p);
    }
    return p;
  };
  const settled = await Promise.allSettled(srv.map(async (r) => (await ipsOf(r.name)).map((ip) => ({ ip, port: r.port, weight: r.weight, priority: r.priority }))));
  const addresses = settled.flatMap((x) => (x.status === 'fulfilled' ? x.value : []));
  const failed = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected');
  if (addresses.length === 0 && failed) throw failed.reason;
  return { addresses: addresses.slice(0, DISCOVERY_MAX_ADDRESSES), ttls };
}

/** An SRV target's addresses: A records, else AAAA. */
async function hostAddresses(resolver: Resolver, host: string, ttls: number[]): Promise<string[]> {
  try {
    const v4 = await resolver.resolve4(host, { ttl: true });
    ttls.push(...v4.map((r) => r.ttl));
    return v4.map((r) => r.address);
  } catch (err) {
    const v6 = await resolver.resolve6(host, { ttl: true }).catch(() => {
      throw err;
    });
    ttls.push(...v6.map((r) => r.ttl));
    return v6.map((r) => r.address);
  }
}
