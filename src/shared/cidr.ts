import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';
import { splitHostPort } from './host-port.js';

// IPv4/IPv6 addresses and CIDR blocks: ip-restriction's lists, worker.json's trustedProxies
// and upstreams. Parsed by ipaddr.js, matched by proxy-addr's compiled trust functions.

/**
 * An address or `address/prefix`, the prefix in digits and in range for the family; null
 * otherwise. The address must pass node:net's isIP: ipaddr.js alone also reads `127.1`,
 * `0x7f.0.0.1` and `2130706433` as 127.0.0.1, and proxy-addr takes netmasks and names.
 */
export function parseCidr(s: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | null {
  const slash = s.indexOf('/');
  const ip = slash === -1 ? s : s.slice(0, slash);
  const kind = isIP(ip);
  if (kind === 0) return null;
  if (slash === -1) return [ipaddr.parse(ip), kind === 4 ? 32 : 128];
  if (!/^\d{1,3}$/.test(s.slice(slash + 1))) return null;
  try {
    return ipaddr.parseCIDR(s);
  } catch {
    return null; // a prefix longer than the family's width
  }
}

/**
 * An IPv6 address (isIP 6) in one spelling, as the WHATWG URL serializer writes it: lower
 * case, compressed, no zone (it names the interface, not the address), an embedded IPv4
 * address in hex. proxy-addr's ipaddr.js 1.x cannot parse `::1.2.3.4` or `64:ff9b::1.2.3.4`,
 * and ipaddr.js 2 reads `::1.2.3.4` (IPv4-compatible) as `::ffff:1.2.3.4`; the hex form
 * both read alike.
 */
function v6Text(ip: string): string {
  return new URL(`http://[${ip.split('%')[0]!}]`).hostname.slice(1, -1);
}

/**
 * A block as proxy-addr's compile takes it: the address in v6Text's spelling; a /0 block
 * as the family's two /1 halves (proxy-addr refuses /0; worker.json may say it, with a warning).
 */
function blocksFor(cidr: string): string[] {
  const [ip, len] = cidr.split('/') as [string, string | undefined];
  const v4 = isIP(ip) === 4;
  if (len !== undefined && Number(len) === 0) return v4 ? ['0.0.0.0/1', '128.0.0.0/1'] : ['::/1', '8000::/1'];
  const text = v4 ? ip : v6Text(ip);
  return [len === undefined ? text : `${text}/${len}`];
}

/**
 * Builds a matcher for a list of blocks (each one parseCidr accepts), once: a match parses
 * the address, never the blocks. IPv4-mapped IPv6 addresses (in any spelling) match IPv4
 * blocks, and an `::ffff:a.b.c.d/96` (or longer) block matches the IPv4 addresses it maps.
 */
export function cidrMatcher(list: readonly string[]): (ip: string) => boolean {
  const trust = proxyaddr.compile(list.flatMap(blocksFor));
  return (ip) => {
    // Only what isIP accepts is asked: proxy-addr's ipaddr.js 1.x reads 2130706433 as an address.
    const kind = isIP(ip);
    if (kind === 4) return trust(ip, 0);
    return kind === 6 && trust(ip.includes('.') ? v6Text(ip) : ip, 0);
  };
}

/**
 * `match` with each address's answer kept, for the per-request callers (trustedProxies,
 * ip-restriction): proxy-addr parses the address on every call (3 µs an IPv4 address, 10 µs
 * an IPv6 one against three blocks; a kept answer 70 ns). Bounded to `max` addresses, least
 * recently used out first (a hit moves its address to the Map's end): a client rotating
 * addresses evicts its own old ones, never an address in steady use.
 */
export function cachedMatcher(match: (ip: string) => boolean, max = 1024): (ip: string) => boolean {
  const known = new Map<string, boolean>();
  return (ip) => {
    let yes = known.get(ip);
    if (yes === undefined) {
      yes = match(ip);
      if (known.size >= max) known.delete(known.keys().next().value!);
    } else known.delete(ip);
    known.set(ip, yes);
    return yes;
  };
}

/**
 * The address in one X-Forwarded-For hop, without the port or brackets some proxies add
 * (`203.0.113.7:4711`, `[2001:db8::1]:443`); null when it is not an IP address.
 * proxy-addr reads hops as written (an address or nothing), so this stays ours.
 */
export function hopAddress(hop: string): string | null {
  const hp = splitHostPort(hop.trim());
  return hp !== null && isIP(hp.host) ? hp.host : null;
}

/**
 * The address as matchers and rate-limit keys read it: an IPv4-mapped IPv6 address in any
 * spelling (`::ffff:7f00:1`, `0:0:0:0:0:ffff:127.0.0.1`) is the IPv4 address it reaches;
 * other IPv6 addresses as v6Text writes them.
 */
export function canonicalIp(raw: string): string | null {
  const ip = raw.split('%')[0]!;
  const kind = isIP(ip);
  if (kind === 4) return ip;
  if (kind !== 6) return null;
  const text = v6Text(ip);
  return text.startsWith('::ffff:') ? ipaddr.process(text).toString() : text;
}
