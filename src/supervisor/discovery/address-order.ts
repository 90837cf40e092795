import { isIP } from 'node:net';
import type { DiscoveredAddress } from '../../contracts/discovery.js';
import { DISCOVERY_MAX_ADDRESSES } from '../../contracts/discovery.js';
import { joinHostPort } from '../../shared/host-port.js';

/**
 * The deterministic order of a name's answer (pure), so that the DISCOVERY_MAX_ADDRESSES
 * kept are the same whatever order the server rotates its records in: SRV records by
 * priority (lowest first), weight (highest first), target name, port; each host's
 * addresses, and A/AAAA answers, by address (numeric). The allow-list is applied before
 * the cap, so a refused address never takes a slot.
 */

/** One address an answer gave, before the upstream policy: the IP, its port (SRV), and the SRV record's weight and priority. */
export interface Answered {
  ip: string;
  /** SRV: the record's port; A/AAAA: absent (each source gives its own). */
  port?: number;
  weight?: number;
  priority?: number;
}

export interface SrvRecordLike {
  name: string;
  port: number;
  weight: number;
  priority: number;
}

/** A key whose text order is the numeric order of the address: IPv4 before IPv6. */
export function ipOrderKey(ip: string): string {
  if (isIP(ip) === 4) return `4${ip.split('.').map((o) => o.padStart(3, '0')).join('.')}`;
  const [head = '', tail = ''] = ip.toLowerCase().split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t] : h;
  return `6${groups.map((g) => g.padStart(4, '0')).join(':')}`;
}

export const byAddress = (a: string, b: string): number => {
  const x = ipOrderKey(a);
  const y = ipOrderKey(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/** SRV records in the order they are used: priority ascending, weight descending, then target and port. */
export function orderSrv<T extends SrvRecordLike>(records: readonly T[]): T[] {
  return [...records].sort((a, b) => a.priority - b.priority || b.weight - a.weight || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || a.port - b.port);
}

export interface Selected {
  allowed: DiscoveredAddress[];
  refused: { address: string; rule: string }[];
}

/**
 * A source's addresses from an ordered answer: each given `port` (A/AAAA) or its record's
 * (SRV), checked by `refusal` (the tenant's upstream policy; null: allowed), duplicates
 * dropped, the first DISCOVERY_MAX_ADDRESSES allowed kept.
 */
export function selectAddresses(answer: readonly Answered[], port: number | undefined, refusal: (ip: string, port: number) => string | null, max = DISCOVERY_MAX_ADDRESSES): Selected {
  const allowed: DiscoveredAddress[] = [];
  const refused: { address: string; rule: string }[] = [];
  const seen = new Set<string>();
  for (const a of answer) {
    if (allowed.length >= max) break;
    const p = a.port ?? port!;
    const hostPort = joinHostPort(a.ip, p);
    if (seen.has(hostPort)) continue;
    seen.add(hostPort);
    const rule = refusal(a.ip, p);
    if (rule !== null) {
      if (refused.length < max) refused.push({ address: hostPort, rule });
      continue;
    }
    allowed.push({ hostPort, ...(a.weight !== undefined ? { weight: a.weight } : {}), ...(a.priority !== undefined ? { priority: a.priority } : {}) });
  }
  return { allowed, refused };
}
