import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { Client } from 'undici';
import { urlHostPort } from './host-port.js';
import { UPSTREAM_DENIED, checkLiteral, upstreamPolicy, type UpstreamCheck, type UpstreamRules } from './upstream-policy.js';

/**
 * Connect-time half of the upstream policy, in workers: a host name is checked against
 * every address it resolves to, on each new connection (a name may resolve elsewhere
 * later: DNS rebinding), and an IP literal once when its pool is built. Requests on an
 * open connection pay nothing.
 */

let policy: ((tenant: string) => UpstreamCheck) | null = null;

/** Set once at worker start from worker.json; unset (tests building pools directly): nothing is refused. */
export function installUpstreamPolicy(rules: UpstreamRules | undefined): void {
  policy = rules ? upstreamPolicy(rules) : null;
}

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

/** undici's `connect` option for a connection of `tenant` to `target` (host:port), `base` added. */
export function guardedConnect(tenant: string, target: string, base: ConnectOptions = {}): Connect {
  const guard = connectGuard(tenant, target);
  if ('denied' in guard) {
    const err = guard.denied;
    return (_opts, cb) => void process.nextTick(cb, err, null);
  }
  return guard.lookup ? { ...base, lookup: guard.lookup } : base;
}

/**
 * The same policy for a client other than undici's (the WebSocket relay's): an IP literal
 * refused now, or net.connect's `lookup` that refuses names resolving to refused addresses.
 */
export function connectGuard(tenant: string, target: string): { denied: Error } | { lookup?: ReturnType<typeof guardedLookup> } {
  if (policy === null) return {};
  const check = policy(tenant);
  const { host, port } = urlHostPort(target);
  const literal = checkLiteral(check, host, port);
  if (literal !== null) return { denied: deniedError(target, host, literal) };
  // net.connect makes no lookup for an IP address: only a name gets one.
  return isIP(host) === 0 ? { lookup: guardedLookup(check, target, port) } : {};
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
