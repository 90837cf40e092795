import * as v from 'valibot';
import { createHash } from 'node:crypto';
import { defineStep } from './step.js';

/**
 * Sends each request to one of several clusters by weight (canary releases). With
 * `stickyHeader` or `stickyCookie`, the same value always lands on the same cluster
 * (a hash of it picks the slot), so a user stays on one version.
 */
export const trafficSplit = defineStep({
  code: 'traffic-split',
  summary: 'Weighted choice among clusters, optionally sticky by header or cookie',
  details: 'At least one weight must be above 0. `stickyHeader` wins over `stickyCookie` when both are set and sent; the cookie is read as RFC 6265 pairs (the first of a repeated name, its value percent-decoded).',
  statuses: [],
  example: { clusters: [{ cluster: 'api-v1', weight: 90 }, { cluster: 'api-v2', weight: 10 }], stickyCookie: 'session' },
  schema: v.pipe(
    v.strictObject({
      clusters: v.pipe(v.array(v.strictObject({ cluster: v.pipe(v.string(), v.minLength(1)), weight: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000)) })), v.minLength(1)),
      stickyHeader: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/))),
      stickyCookie: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]+$/))),
    }),
    v.check((s) => s.clusters.some((c) => c.weight > 0), 'at least one weight must be above 0'),
  ),
  clusterRefs: (s) => s.clusters.map((c, i) => ({ pointer: `/clusters/${i}/cluster`, name: c.cluster })),
  create(s, { tenant, env }) {
    const random = env.random ?? Math.random;
    const total = s.clusters.reduce((a, c) => a + c.weight, 0);
    const keys = s.clusters.map((c) => `${tenant}/${c.cluster}`);
    const pick = (x: number) => {
      let acc = 0;
      for (let i = 0; i < s.clusters.length; i++) {
        acc += s.clusters[i]!.weight;
        if (x < acc) return keys[i]!;
      }
      return keys[keys.length - 1]!;
    };
    const header = s.stickyHeader?.toLowerCase();
    const cookie = s.stickyCookie;
    return (flow) => {
      // The header first; the cookie as the `cookie` package reads it (cookie-header.ts), parsed once per request.
      const sticky = (header ? flow.req.header(header) : undefined) ?? (cookie ? flow.req.cookie(cookie) : undefined);
      const x = sticky === undefined ? random() * total : createHash('sha1').update(sticky).digest().readUInt32BE(0) % total;
      flow.cluster = pick(x);
      return undefined;
    };
  },
});
