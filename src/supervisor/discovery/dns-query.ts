import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { DnsRecordType } from '../../contracts/discovery.js';
import { DISCOVERY_MAX_ADDRESSES } from '../../contracts/discovery.js';
import { byAddress, orderSrv, type Answered } from './address-order.js';

export type { Answered } from './address-order.js';

export interface Answer {
  /** In the order they are used (address-order.ts); SRV: only as far as the cap needed. */
  addresses: Answered[];
  /** The records' TTLs in seconds (empty: none known). */
  ttls: number[];
}

/** What is asked: one name and type (a tenant's clusters writing it share the answer). */
export interface DnsQuestion {
  name: string;
  type: DnsRecordType;
}

/** The part of node's Resolver a query uses (tests give their own). */
export type DnsClient = Pick<Resolver, 'resolve4' | 'resolve6' | 'resolveSrv'>;

/** How long one query waits for the server, and how many times it is sent (node's c-ares options). */
export const DNS_TIMEOUT_MS = 2_000;
export const DNS_TRIES = 2;
/** A resolution (SRV with its hosts included) that has not ended by then fails `ETIMEOUT`: a server that never answers cannot hold a name. */
export const DNS_DEADLINE_MS = 8_000;
/** SRV records looked at (after ordering): the rest of a larger answer is not used. */
export const SRV_MAX_RECORDS = 256;
/** SRV target hosts resolved at once. */
export const SRV_HOST_CONCURRENCY = 8;

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

/**
 * A name's addresses in their order (address-order.ts): its A or AAAA records, or its SRV
 * records, each record's target resolved (A, else AAAA) to addresses that take its port,
 * weight and priority. SRV hosts are resolved SRV_HOST_CONCURRENCY at a time in record
 * order, and no further once `accept` (the upstream policy) has said yes to
 * DISCOVERY_MAX_ADDRESSES of them. A failure (NXDOMAIN, no records, timeout, refused)
 * rejects with node's error; an SRV target that does not resolve is left out while another
 * does. Bounded by DNS_DEADLINE_MS.
 */
export function queryDns(resolver: DnsClient, q: DnsQuestion, accept: (ip: string, port: number) => boolean, deadlineMs = DNS_DEADLINE_MS): Promise<Answer> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`query ${q.type} ${q.name} took longer than ${deadlineMs} ms`), { code: 'ETIMEOUT' })), deadlineMs);
  });
  return Promise.race([resolveName(resolver, q, accept), deadline]).finally(() => clearTimeout(timer));
}

async function resolveName(resolver: DnsClient, q: DnsQuestion, accept: (ip: string, port: number) => boolean): Promise<Answer> {
  if (q.type === 'A' || q.type === 'AAAA') {
    const recs = q.type === 'A' ? await resolver.resolve4(q.name, { ttl: true }) : await resolver.resolve6(q.name, { ttl: true });
    const ips = [...new Set(recs.map((r) => r.address))].sort(byAddress);
    return { addresses: ips.map((ip) => ({ ip })), ttls: recs.map((r) => r.ttl) };
  }
  const records = orderSrv(await resolver.resolveSrv(q.name)).slice(0, SRV_MAX_RECORDS);
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
  const addresses: Answered[] = [];
  let accepted = 0;
  let failure: unknown = null;
  // Batches in record order: the answer is the same whichever host answers first.
  for (let i = 0; i < records.length && accepted < DISCOVERY_MAX_ADDRESSES; i += SRV_HOST_CONCURRENCY) {
    const batch = records.slice(i, i + SRV_HOST_CONCURRENCY);
    const settled = await Promise.allSettled(batch.map((r) => ipsOf(r.name)));
    settled.forEach((s, k) => {
      if (s.status === 'rejected') return void (failure ??= s.reason);
      const r = batch[k]!;
      for (const ip of s.value) {
        addresses.push({ ip, port: r.port, weight: r.weight, priority: r.priority });
        if (accept(ip, r.port)) accepted++;
      }
    });
  }
  if (addresses.length === 0 && failure !== null) throw failure;
  return { addresses, ttls };
}

/** An SRV target's addresses (A records, else AAAA), in address order. */
async function hostAddresses(resolver: DnsClient, host: string, ttls: number[]): Promise<string[]> {
  try {
    const v4 = await resolver.resolve4(host, { ttl: true });
    ttls.push(...v4.map((r) => r.ttl));
    return v4.map((r) => r.address).sort(byAddress);
  } catch (err) {
    const v6 = await resolver.resolve6(host, { ttl: true }).catch(() => {
      throw err;
    });
    ttls.push(...v6.map((r) => r.ttl));
    return v6.map((r) => r.address).sort(byAddress);
  }
}
