import { isIP } from 'node:net';
import { canonicalIp, cidrMatcher } from './cidr.js';
import { joinHostPort } from './host-port.js';

/**
 * Which upstream addresses a tenant's clusters and service-calling steps may reach
 * (docs/reference.md "Upstream allow-list"). One decision, used by the compiler for literal
 * addresses and by workers for the addresses host names resolve to at connect time.
 *
 * In order: the gateway's own admin port (never reachable) and data port (a loop);
 * worker.json `upstreams.deny`; `upstreams.allow`; for tenants other than `default`,
 * the host's own and internal ranges (DEFAULT_DENIED); anything else is allowed.
 */

/** Plain JSON: worker.json's `upstreams` with the gateway's own ports; it crosses IPC to workers. */
export interface UpstreamRules {
  allow: string[];
  deny: string[];
  /** Per tenant, added to the lists above. */
  tenants: Record<string, { allow: string[]; deny: string[] }>;
  /** admin.listen and the data port's listen address. */
  admin: { host: string; port: number };
  data: { host: string; port: number };
  /** The TLS data port (worker.json listen.tls), refused like the plain one. */
  dataTls?: { host: string; port: number };
  /** The host's own interface addresses, where a port bound to 0.0.0.0 or :: answers too. */
  local?: string[];
}

/** The code of the error a refused connection fails with (502 Svc.Data.UpstreamDenied). */
export const UPSTREAM_DENIED = 'SY_UPSTREAM_DENIED';

/** The operator's own tenant: it keeps loopback and private upstreams. */
export const OPERATOR_TENANT = 'default';

/** Refused to tenants other than `default` unless `upstreams.allow` lists them. */
export const DEFAULT_DENIED: readonly (readonly [string, string])[] = [
  ['0.0.0.0/8', 'unspecified'],
  ['127.0.0.0/8', 'loopback'],
  ['10.0.0.0/8', 'private'],
  ['172.16.0.0/12', 'private'],
  ['192.168.0.0/16', 'private'],
  ['100.64.0.0/10', 'shared (CGNAT)'],
  ['169.254.0.0/16', 'link-local (cloud metadata)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['::/128', 'unspecified'],
  ['::/96', 'IPv4-compatible'],
  ['64:ff9b::/96', 'NAT64'],
  ['64:ff9b:1::/48', 'NAT64'],
  ['::1/128', 'loopback'],
  ['fc00::/7', 'private'],
  ['fe80::/10', 'link-local'],
  ['ff00::/8', 'multicast'],
];

const LOCAL = ['0.0.0.0/8', '127.0.0.0/8', '::/128', '::1/128'];
const WILDCARD = new Set(['0.0.0.0', '::']);

/** null: allowed; else the rule that refuses the address, for messages. */
export type UpstreamCheck = (ip: string, port: number) => string | null;

/** Builds one check per tenant, once; a check parses no CIDR. */
export function upstreamPolicy(rules: UpstreamRules): (tenant: string) => UpstreamCheck {
  const own = (which: 'admin' | 'data' | 'dataTls', label: string) => {
    const { host, port } = rules[which] ?? rules.data;
    // A wildcard admin bind answers on every address of the host, which no list can name:
    // that port is refused everywhere. A wildcard data port is refused on the host's own
    // addresses (a route to one would proxy to itself), not on every service of that port.
    const everywhere = which === 'admin' && WILDCARD.has(host);
    const at = cidrMatcher(WILDCARD.has(host) ? [...LOCAL, ...(rules.local ?? [])] : [...LOCAL, host]);
    const hostPort = joinHostPort(host, port);
    return (ip: string, p: number) => (p === port && (everywhere || at(ip)) ? `the gateway's own ${label} (${hostPort})` : null);
  };
  const adminPort = own('admin', 'admin port');
  const plainPort = own('data', 'data port');
  const tlsPort = rules.dataTls ? own('dataTls', 'TLS data port') : () => null;
  const dataPort = (ip: string, port: number) => plainPort(ip, port) ?? tlsPort(ip, port);
  const ranges = DEFAULT_DENIED.map(([cidr, what]) => ({ cidr, what, match: cidrMatcher([cidr]) }));
  const cache = new Map<string, UpstreamCheck>();
  const build = (tenant: string): UpstreamCheck => {
    const extra = rules.tenants[tenant];
    const deny = [...rules.deny, ...(extra?.deny ?? [])].map((cidr) => ({ cidr, match: cidrMatcher([cidr]) }));
    const allow = cidrMatcher([...rules.allow, ...(extra?.allow ?? [])]);
    const restricted = tenant !== OPERATOR_TENANT;
    // A compile checks every target of every cluster, mostly the same few: each answered once (bounded).
    const seen = new Map<string, string | null>();
    const memo: UpstreamCheck = (raw, port) => {
      const key = `${raw} ${port}`;
      let r = seen.get(key);
      if (r === undefined) {
        if (seen.size >= 4096) seen.clear();
        seen.set(key, (r = decide(raw, port)));
      }
      return r;
    };
    const decide: UpstreamCheck = (raw, port) => {
      const ip = canonicalIp(raw.startsWith('[') ? raw.slice(1, -1) : raw);
      if (ip === null) return `${raw} is not an IP address`;
      const own = adminPort(ip, port) ?? dataPort(ip, port);
      if (own) return own;
      const d = deny.find((b) => b.match(ip));
      if (d) return `upstreams.deny ${d.cidr}`;
      if (allow(ip) || !restricted) return null;
      const r = ranges.find((b) => b.match(ip));
      return r ? `${r.what} ${r.cidr}: refused to tenants other than default unless upstreams.allow lists it` : null;
    };
    return memo;
  };
  return (tenant) => {
    let c = cache.get(tenant);
    if (!c) cache.set(tenant, (c = build(tenant)));
    return c;
  };
}


/**
 * The check for an address known before connecting (an IP literal); null for a host
 * name, which is checked against what it resolves to when a connection is made.
 */
export function checkLiteral(check: UpstreamCheck, host: string, port: number): string | null {
  return isIP(host) === 0 ? null : check(host, port);
}
