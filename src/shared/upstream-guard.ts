import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { Client } from 'undici';
import { urlHostPort } from './host-port.js';
import { UPSTREAM_DENIED, checkLiteral, upstreamPolicy, type UpstreamCheck, type UpstreamRules } from './upstream-policy.js';

/**
 * Connect-time half of the upstream policy (workers' pools, health probes): a host name is checked against
 * every address it resolves to, on each new connection (a name may resolve elsewhere
 * later: DNS rebinding), and an IP literal once when its pool is built. Requests on an
 * open connection pay nothing.
 */

/** A connection refused by the upstream policy before it was made (502 Svc.Data.UpstreamDenied). */
export class UpstreamDeniedError extends Error {
  override readonly name = 'UpstreamDeniedError';
  readonly code = UPSTREAM_DENIED;
}

function deniedError(target: string, address: string, rule: string): Error {
  return new UpstreamDeniedError(`upstream ${target} (${address}) is refused: ${rule}`);
}

type Connect = NonNullable<Client.Options['connect']>;

/** undici's connect options without the connector function: a timeout, TLS settings. */
type ConnectOptions = Exclude<Connect, (...args: never[]) => unknown>;

/** A connection's verdict: refused now (an IP literal), or allowed with net.connect's checking `lookup` (a name). */
export type ConnectVerdict = { denied: Error } | { lookup?: ReturnType<typeof guardedLookup> };

/**
 * The upstream policy as a value its owner passes to whatever opens connections (a
 * worker's context, the supervisor's health probes). It is built from worker.json's
 * rules; a guard with no rules does not exist, so no connection is ever allowed by a
 * policy that was forgotten. `allowAll()` is the one way to refuse nothing.
 */
export class UpstreamGuard {
  private constructor(private readonly policy: ((tenant: string) => UpstreamCheck) | null) {}

  static from(rules: UpstreamRules): UpstreamGuard {
    return new UpstreamGuard(upstreamPolicy(rules));
  }

  /** Refuses nothing: only for a caller that deliberately connects anywhere (tests of pools and handlers). */
  static allowAll(): UpstreamGuard {
    return new UpstreamGuard(null);
  }

  /** undici's `connect` option for a connection of `tenant` to `target` (host:port), `base` added. */
  connect(tenant: string, target: string, base: ConnectOptions = {}): Connect {
    const verdict = this.check(tenant, target);
    if ('denied' in verdict) {
      const err = verdict.denied;
      return (_opts, cb) => void process.nextTick(cb, err, null);
    }
    return verdict.lookup ? { ...base, lookup: verdict.lookup } : base;
  }

  /** The rule refusing the address `ip` (an IP literal) at `port` to `tenant`, or null: the supervisor checks discovered addresses one by one. */
  refusal(tenant: string, ip: string, port: number): string | null {
    return this.policy === null ? null : checkLiteral(this.policy(tenant), ip, port);
  }

  /**
   * The same policy for a client other than undici's (the WebSocket relay's): an IP literal
   * refused now, or net.connect's `lookup` that refuses names resolving to refused addresses.
   */
  check(tenant: string, target: string): ConnectVerdict {
    if (this.policy === null) return {};
    const check = this.policy(tenant);
    const { host, port } = urlHostPort(target);
    const literal = checkLiteral(check, host, port);
    if (literal !== null) return { denied: deniedError(target, host, literal) };
    // net.connect makes no lookup for an IP address: only a name gets one.
    return isIP(host) === 0 ? { lookup: guardedLookup(check, target, port) } : {};
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** net.connect's `lookup`: dns.lookup, then every address it gave must pass the check. */
function guardedLookup(check: UpstreamCheck, target: string, port: number) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    dnsLookup(hostname, options as { all: true }, (err, address: string | LookupAddress[], family?: number) => {
      if (err) return callback(err, address, family);
      const list = Array.isArray(address) ? address : [{ address, family: family ?? 4 }];
      for (const a of list) {
        const rule = check(a.address, port);
        if (rule !== null) return callback(deniedError(target, a.address, rule), '', 0);
      }
      callback(null, address, family);
    });
  };
}
