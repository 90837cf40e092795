import { defineStep, v } from 'switchyard/step';
import { pickVariant, pointOf } from './pick.js';

export { pickVariant, pointOf } from './pick.js';

const HeaderName = v.pipe(v.string(), v.regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be a header name'), v.toLowerCase());
// Cookie names and values the step writes are tokens: nothing to quote or escape.
const Token = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1 to 64 of A-Z, a-z, 0-9, _ . -'));

const Settings = v.strictObject({
  cookie: v.optional(Token, 'ab'),
  variants: v.pipe(
    v.array(v.strictObject({ name: Token, weight: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000)) })),
    v.minLength(1),
    v.check((vs) => new Set(vs.map((x) => x.name)).size === vs.length, 'variant names must differ'),
    v.check((vs) => vs.some((x) => x.weight > 0), 'at least one variant needs a weight above 0'),
  ),
  /** The request header the upstream reads the variant from; the client's own value never passes. */
  header: v.optional(HeaderName, 'x-variant'),
  /** A header naming the user (set by an auth step before this one): the same user always gets the same variant. */
  keyHeader: v.optional(HeaderName),
  maxAgeSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(400 * 24 * 3600)), 30 * 24 * 3600),
  secure: v.optional(v.boolean(), false),
});

export type AbSettings = v.InferOutput<typeof Settings>;

export default defineStep({
  code: 'ab-assignment',
  summary: 'Assigns each client an A/B variant, kept by a cookie, and tells the upstream in a request header.',
  settings: Settings,
  answers: [],
  docs:
    'A request whose cookie names one of the variants keeps it. Otherwise a variant is picked by weight: from a hash of `keyHeader`\'s value when the request has it (the same user, the same variant), else at random; ' +
    'the response sets the cookie (`HttpOnly; SameSite=Lax; Path=/; Max-Age`). The upstream reads the variant in `header`; a value the client sent in it is dropped.',
  example: { cookie: 'ab', variants: [{ name: 'control', weight: 90 }, { name: 'new-checkout', weight: 10 }], header: 'x-variant', maxAgeSeconds: 2592000 },
  ownedHeaders: (s) => [s.header],
  create(s) {
    const names = new Set(s.variants.map((x) => x.name));
    const attributes = `; Max-Age=${s.maxAgeSeconds}; Path=/; HttpOnly; SameSite=Lax${s.secure ? '; Secure' : ''}`;
    return (flow) => {
      const kept = flow.req.cookie(s.cookie);
      if (kept !== undefined && names.has(kept)) {
        flow.setHeader(s.header, kept);
        return undefined;
      }
      const key = s.keyHeader === undefined ? undefined : flow.req.header(s.keyHeader);
      const variant = pickVariant(s.variants, key ? pointOf(s.cookie, key) : Math.random());
      flow.setHeader(s.header, variant);
      flow.addResponseHeader('set-cookie', `${s.cookie}=${variant}${attributes}`);
      return undefined;
    };
  },
});
