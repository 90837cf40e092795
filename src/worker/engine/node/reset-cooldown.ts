import ipaddr from 'ipaddr.js';

/** Addresses remembered at once; past it the oldest is forgotten, so a spray of addresses cannot grow the worker. */
const MAX_ADDRESSES = 10_000;

/**
 * The addresses whose HTTP/2 connection was closed for rapid reset. For
 * limits.h2ResetCooldownS their new connections are cut at accept, before any TLS
 * handshake: a flooder that reconnects at once otherwise costs the worker a handshake per
 * 250 streams (54 % of a core for 54 reconnections in 3 s, measured), and the other
 * clients' p99 with it. An IPv6 client is kept by its /64, the block one host is usually
 * given, so it cannot step to the next address. Per worker: each worker's engine keeps its
 * own. Entries go in expiry order (one cooldown for all), so the oldest is first.
 */
export class ResetCooldown {
  private readonly until = new Map<string, number>();

  constructor(private readonly cooldownMs: number) {}

  /** `address` just tripped the rapid-reset guard. */
  begin(address: string | undefined): void {
    if (address === undefined || this.cooldownMs === 0) return;
    const key = keyOf(address);
    this.until.delete(key);
    this.until.set(key, Date.now() + this.cooldownMs);
    if (this.until.size > MAX_ADDRESSES) this.until.delete(this.until.keys().next().value!);
  }

  /** Whether a new connection from `address` is refused. */
  refuses(address: string | undefined): boolean {
    if (this.until.size === 0 || address === undefined) return false;
    const key = keyOf(address);
    const end = this.until.get(key);
    if (end === undefined) return false;
    if (end > Date.now()) return true;
    this.until.delete(key);
    return false;
  }
}

/** An IPv4 address as it is (also IPv4-mapped IPv6, as node writes it), an IPv6 one as its /64. */
function keyOf(address: string): string {
  if (!address.includes(':') || address.startsWith('::ffff:')) return address;
  if (!ipaddr.IPv6.isValid(address)) return address;
  return ipaddr.IPv6.parse(address).parts.slice(0, 4).join(':') + '::/64';
}
