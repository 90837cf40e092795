import { isIP } from 'node:net';
import { splitHostPort } from './host-port.js';

// IPv4/IPv6 addresses and CIDR blocks: ip-restriction's lists and worker.json's
// trustedProxies. Matchers are built once; a match costs no parsing of the blocks.

interface Block {
  bits: bigint;
  mask: bigint;
  v6: boolean;
}

function toBig(ip: string): { value: bigint; v6: boolean } | null {
  const kind = isIP(ip);
  if (kind === 4) return { value: ip.split('.').reduce((a, p) => (a << 8n) | BigInt(Number(p)), 0n), v6: false };
  if (kind !== 6) return null;
  let s = ip;
  const v4tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4tail) {
    const n = toBig(v4tail[1]!)!.value;
    s = s.slice(0, -v4tail[1]!.length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return { value: groups.reduce((a, g) => (a << 16n) | BigInt(parseInt(g, 16)), 0n), v6: true };
}

export function parseCidr(s: string): Block | null {
  const parts = s.split('/');
  if (parts.length > 2) return null;
  const [ip, len] = parts as [string, string | undefined];
  const a = toBig(ip);
  if (!a) return null;
  const width = a.v6 ? 128 : 32;
  if (len !== undefined && !/^\d{1,3}$/.test(len)) return null;
  const prefix = len === undefined ? width : Number(len);
  if (prefix > width) return null;
  // An IPv4-mapped IPv6 block (::ffff:a.b.c.d/96 and longer) is the IPv4 block it maps:
  // peers are always seen as dotted IPv4, so as IPv6 it would never match.
  if (a.v6 && prefix >= 96 && a.value >> 32n === 0xffffn) return block(a.value & 0xffffffffn, prefix - 96, false);
  return block(a.value, prefix, a.v6);
}

function block(value: bigint, prefix: number, v6: boolean): Block {
  const width = v6 ? 128 : 32;
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(width - prefix);
  return { bits: value & mask, mask, v6 };
}

/**
 * The address in one X-Forwarded-For hop, without the port or brackets some proxies add
 * (`203.0.113.7:4711`, `[2001:db8::1]:443`); null when it is not an IP address.
 */
export function hopAddress(hop: string): string | null {
  const hp = splitHostPort(hop.trim());
  return hp !== null && isIP(hp.host) ? hp.host : null;
}

/** Builds a matcher for a list of blocks. IPv4-mapped IPv6 peers match IPv4 blocks. */
export function cidrMatcher(list: readonly string[]): (ip: string) => boolean {
  const blocks = list.map((s) => parseCidr(s)!);
  return (ip) => {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    const a = toBig(mapped ? mapped[1]! : ip);
    if (!a) return false;
    return blocks.some((b) => b.v6 === a.v6 && (a.value & b.mask) === b.bits);
  };
}

/**
 * The address as matchers and rate-limit keys read it: an IPv4-mapped IPv6 address in any spelling
 * (`::ffff:7f00:1`, `0:0:0:0:0:ffff:127.0.0.1`) is the IPv4 address it reaches.
 */
export function canonicalIp(raw: string): string | null {
  const ip = raw.split('%')[0]!; // a zone names the interface, not the address
  const kind = isIP(ip);
  if (kind === 4) return ip;
  if (kind !== 6) return null;
  const h = new URL(`http://[${ip}]`).hostname.slice(1, -1);
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(h);
  if (!m) return h;
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}
