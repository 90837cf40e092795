import * as v from 'valibot';

const Weight = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000));
const Port = v.pipe(v.number(), v.integer(), v.minValue(1, 'port must be 1-65535'), v.maxValue(65_535, 'port must be 1-65535'));

/** A DNS name: labels of letters, digits, `-` and `_` (SRV's `_http._tcp.`), at most 253 characters, not an IP address. */
const DnsName = v.pipe(
  v.string(),
  v.regex(/^(?=.{1,253}\.?$)(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?$/, 'must be a DNS name (labels of letters, digits, - and _, up to 63 characters each, 253 in all)'),
  v.check((s) => !/^[0-9.]+$/.test(s), 'is an IP address: write it as a host:port target'),
);

/**
 * `{dns, type, port, …}`: the addresses a name resolves to, each its own target
 * (docs/reference.md "DNS targets"): A/AAAA with the port they all take, or SRV with each
 * record's own port, weight and priority.
 */
export const DnsTarget = v.pipe(
  v.strictObject({
    dns: DnsName,
    type: v.optional(v.picklist(['A', 'AAAA', 'SRV'], 'must be A, AAAA or SRV'), 'A'),
    port: v.optional(Port),
    scheme: v.optional(v.picklist(['http', 'https'], 'must be http or https'), 'http'),
    weight: v.optional(Weight),
    refreshSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, 'refreshSeconds must be 1-300'), v.maxValue(300, 'refreshSeconds must be 1-300'))),
  }),
  v.forward(v.check((t) => t.type === 'SRV' || t.port !== undefined, 'an A or AAAA target needs port'), ['port']),
  v.forward(v.check((t) => t.type !== 'SRV' || t.port === undefined, 'SRV records give their own ports: drop port'), ['port']),
  v.forward(v.check((t) => t.type !== 'SRV' || t.weight === undefined, 'SRV records give their own weights: drop weight'), ['weight']),
);


export type DnsTargetDoc = v.InferOutput<typeof DnsTarget>;
export const isDnsTarget = (t: string | { address: string; weight: number } | DnsTargetDoc): t is DnsTargetDoc => typeof t === 'object' && 'dns' in t;
