import * as v from 'valibot';
import { defineStep, type StepRequest } from './step.js';
import { Cidr, cidrMatcher, hopAddress } from './cidr.js';
import { stepError } from './reply.js';

/**
 * Allow/deny by client address. The address is the socket peer; X-Forwarded-For is
 * believed only when the peer is one of `trustedProxies` (then the right-most address
 * not itself a trusted proxy is the client; every X-Forwarded-For line counts, ports and
 * brackets are ignored, and a hop that is not an address is refused). Deny wins over
 * allow; with an allow list, anything not on it is denied.
 */
export const ipRestriction = defineStep({
  code: 'ip-restriction',
  summary: 'Allow or deny clients by IPv4/IPv6 address or CIDR block',
  details: 'Needs a non-empty `allow` or `deny` list. X-Forwarded-For counts only when the socket peer is in `trustedProxies`; then every X-Forwarded-For line is read as one list, ports and brackets are ignored, the right-most address that is not a trusted proxy is the client, and a hop that is not an address is refused (403). A `::ffff:a.b.c.d` block matches the IPv4 address.',
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
  create(s) {
    const allow = s.allow.length ? cidrMatcher(s.allow) : null;
    const deny = s.deny.length ? cidrMatcher(s.deny) : null;
    const trusted = s.trustedProxies.length ? cidrMatcher(s.trustedProxies) : null;
    const forbidden = stepError(403, 'Svc.Data.IpDenied', 'The client address is not allowed');
    /** The client's address; null when the hop a trusted proxy named is not an address. */
    const client = (req: StepRequest): string | null => {
      const peer = req.remoteAddress;
      if (!trusted || !trusted(peer)) return peer;
      // Every X-Forwarded-For line, as one list: a client-written first line must not decide.
      const xff = req.headerList('x-forwarded-for');
      if (!xff) return peer;
      const hops = xff.split(',').filter((x) => x.trim() !== '');
      for (let i = hops.length - 1; i >= 0; i--) {
        const ip = hopAddress(hops[i]!);
        if (ip === null || !trusted(ip)) return ip;
      }
      return hops.length ? hopAddress(hops[0]!) : peer;
    };
    return (flow) => {
      const ip = client(flow.req);
      if (ip === null) return forbidden; // an address no list can judge: refused, never let through
      if (deny && deny(ip)) return forbidden;
      if (allow && !allow(ip)) return forbidden;
      return undefined;
    };
  },
});
