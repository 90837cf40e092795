import { cachedMatcher, cidrMatcher } from '../shared/cidr.js';

/**
 * worker.json's `trustedProxies`, matched once per address: built at worker start, and
 * each address's answer kept (the peers of a gateway are few; the cache is bounded).
 */
export class TrustedProxies {
  private readonly match: ((ip: string) => boolean) | null;

  constructor(list: readonly string[]) {
    this.match = list.length ? cachedMatcher(cidrMatcher(list)) : null;
  }

  /** No proxy is trusted: every peer is the client. */
  get none(): boolean {
    return this.match === null;
  }

  /** Whether `ip` (an IPv4-mapped IPv6 address matches its IPv4 block) is a trusted proxy. */
  readonly trusts = (ip: string): boolean => this.match !== null && this.match(ip);
}
