import * as v from 'valibot';
import { parseCidr } from '../shared/cidr.js';

export { cachedMatcher, cidrMatcher, hopAddress, parseCidr } from '../shared/cidr.js';

/** An IPv4 or IPv6 address or CIDR block, checked at compile time. */
export const Cidr = v.pipe(
  v.string(),
  v.check((s) => parseCidr(s) !== null, 'must be an IP address or CIDR block (v4 or v6)'),
);
