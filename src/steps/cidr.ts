import { isIP } from 'node:net';
import * as v from 'valibot';

/** An IPv4 or IPv6 address or CIDR block, checked at compile time. */
export const Cidr = v.pipe(
  v.string(),
  v.check((s) => parseCidr(s) !== null, 'must be an IP address or CIDR block (v4 or v6)'),
);

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
  const [ip, len] = s.split('/') as [string, string | undefined];
  const a = toBig(ip);
  if (!a) return null;
  const width = a.v6 ? 128 : 32;
  const prefix = len === undefined ? width : Number(len);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > width || (len !== undefined && !/^\d+$/.test(len))) return null;
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(width - prefix);
  return { bits: a.value & mask, mask, v6: a.v6 };
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
