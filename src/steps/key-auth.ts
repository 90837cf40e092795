import * as v from 'valibot';
import { createHash, timingSafeEqual } from 'node:crypto';
import { defineStep } from './step.js';
import { headerSafe, stepError } from './reply.js';

/**
 * API keys from a header (or a query parameter), checked against SHA-256 fingerprints in
 * the settings: no plaintext key is ever stored. The consumer id goes upstream in
 * `consumerHeader`; the credential itself is removed before proxying unless kept.
 */
export const keyAuth = defineStep({
  code: 'key-auth',
  summary: 'Require an API key (header or query), checked against SHA-256 fingerprints',
  statuses: [{ status: 401, when: 'no key, or a key whose SHA-256 is not listed' }],
  example: { header: 'x-api-key', keys: [{ id: 'mobile-app', sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' }] },
  schema: v.strictObject({
    header: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/)), 'x-api-key'),
    query: v.optional(v.pipe(v.string(), v.minLength(1))),
    keys: v.pipe(
      v.array(v.strictObject({ id: v.pipe(v.string(), v.minLength(1)), sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits')) })),
      v.minLength(1),
    ),
    consumerHeader: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/)), 'x-consumer-id'),
    keepCredential: v.optional(v.boolean(), false),
  }),
  ownedHeaders: (s) => [s.consumerHeader],
  create(s) {
    const header = s.header.toLowerCase();
    const keys = s.keys.map((k) => ({ id: k.id, digest: Buffer.from(k.sha256, 'hex') }));
    const idHeader = new Map(s.keys.map((k) => [k.id, headerSafe(k.id)]));
    const unauthorized = stepError('Svc.Data.Unauthenticated', 'A valid API key is required', { 'www-authenticate': `ApiKey header="${header}"` });
    const fromQuery = (q: string | null): string | undefined => {
      if (!s.query || !q) return undefined;
      for (const pair of q.split('&')) {
        const eq = pair.indexOf('=');
        if (eq !== -1 && pair.slice(0, eq) === s.query) {
          try {
            return decodeURIComponent(pair.slice(eq + 1));
          } catch {
            return undefined;
          }
        }
      }
      return undefined;
    };
    // Accepted key -> consumer, so a repeat caller skips the hash. In memory only, per
    // generation (it goes when the settings change), and only keys that matched: at most
    // one entry per configured key, so refused keys (any number, any size) cost no memory.
    const seen = new Map<string, string>();
    const lookup = (presented: string): string | null => {
      const digest = createHash('sha256').update(presented).digest();
      let consumer: string | null = null;
      for (const k of keys) if (timingSafeEqual(k.digest, digest) && consumer === null) consumer = k.id;
      if (consumer !== null) seen.set(presented, consumer);
      return consumer;
    };
    return (flow) => {
      const presented = flow.req.header(header) ?? fromQuery(flow.req.query);
      if (!presented) return unauthorized;
      const consumer = seen.get(presented) ?? lookup(presented);
      if (consumer === null) return unauthorized;
      flow.vars.consumer = consumer;
      flow.setHeader(s.consumerHeader, idHeader.get(consumer)!);
      if (!s.keepCredential) {
        flow.removeHeader(header);
        if (s.query && flow.query !== null) flow.query = withoutParam(flow.query, s.query);
      }
      return undefined;
    };
  },
});

/** The query without the pairs named `name` (the other pairs keep their bytes); null when nothing is left. */
function withoutParam(query: string, name: string): string | null {
  const prefix = `${name}=`;
  const kept = query.split('&').filter((p) => p !== name && !p.startsWith(prefix));
  return kept.length ? kept.join('&') : null;
}
