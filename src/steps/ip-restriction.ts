import * as v from 'valibot';
import { defineStep } from './step.js';
import { Cidr, cachedMatcher, cidrMatcher } from './cidr.js';
import { stepError } from './reply.js';

/**
 * Allow/deny by client address: the request's clientAddress (the socket peer, or behind
 * one of worker.json's trustedProxies the right-most X-Forwarded-For hop that is not a
 * trusted proxy). The step's own `trustedProxies` are trusted besides worker.json's, for
 * this step's decision only (nothing else about the request changes). Deny wins over
 * allow; with an allow list, anything not on it is denied.
 */
export const ipRestriction = defineStep({
  code: 'ip-restriction',
  summary: 'Allow or deny clients by IPv4/IPv6 address or CIDR block',
  details: 'Needs a non-empty `allow` or `deny` list. The client is the socket peer, unless the peer is a trusted proxy (worker.json `trustedProxies`, or this step\'s own `trustedProxies`, which count for this step only): then every X-Forwarded-For line is read as one list from the right, trusted proxies are skipped, and the first address that is not one is the client (every hop trusted: the left-most). Ports and brackets around a hop are ignored; a hop that is not an address ends the walk: the address to its right (or the peer) is the client. A `::ffff:a.b.c.d` block matches the IPv4 address.',
  statuses: [{ status: 403, when: 'the client address is denied or not allowed' }],
  example: { allow: ['10.0.0.0/8', '2001:db8::/32'], trustedProxies: ['127.0.0.1'] },
  schema: v.pipe(
    v.strictObject({
      allow: v.optional(v.array(Cidr), []),
      deny: v.optional(v.array(Cidr), []),
      trustedProxies: v.optional(v.array(Cidr), []),
    }),
    v.check((s) => s.allow.length > 0 || s.deny.length > 0, 'needs an allow or a deny list'),
  ),
  create(s, { state }) {
    // Built once and kept across publishes while the step is unchanged; answers kept per address (cachedMatcher says why),
    // 256 of them: a tenant may have many of these steps, and a client behind a proxy many addresses.
    const matcher = (list: string[]) => (list.length ? cachedMatcher(cidrMatcher(list), 256) : null);
    const { allow, deny, trusted } = state(() => ({ allow: matcher(s.allow), deny: matcher(s.deny), trusted: matcher(s.trustedProxies) }));
    const forbidden = stepError('Svc.Data.IpDenied');
    return (flow) => {
      const ip = trusted === null ? flow.req.clientAddress : flow.req.clientAddressTrusting(trusted);
      if (deny && deny(ip)) return forbidden;
      if (allow && !allow(ip)) return forbidden;
      return undefined;
    };
  },
});
