/** Addresses remembered at once; past it the oldest is forgotten, so a spray of addresses cannot grow the worker. */
const MAX_ADDRESSES = 10_000;

/**
 * The addresses whose HTTP/2 connection was closed for rapid reset. For
 * limits.h2ResetCooldownS their new connections are cut at accept, before any TLS
 * handshake: a flooder that reconnects at once otherwise costs the worker a handshake per
 * 250 streams (54 % of a core for 54 reconnections in 3 s, measured), and the other
 * clients' p99 with it. Entries go in expiry order (one cooldown for all), so the oldest
 * is first.
 */
export class ResetCooldown {
  private readonly until = new Map<string, number>();

  constructor(private readonly cooldownMs: number) {}

  /** `address` just tripped the rapid-reset guard. */
  begin(address: string | undefined): void {
    if (address === undefined || this.cooldownMs === 0) return;
    this.until.delete(address);
    this.until.set(address, Date.now() + this.cooldownMs);
    if (this.until.size > MAX_ADDRESSES) this.until.delete(this.until.keys().next().value!);
  }

  /** Whether a new connection from `address` is refused. */
  refuses(address: string | undefined): boolean {
    if (this.until.size === 0 || address === undefined) return false;
    const end = this.until.get(address);
    if (end === undefined) return false;
    if (end > Date.now()) return true;
    this.until.delete(address);
    return false;
  }
}
