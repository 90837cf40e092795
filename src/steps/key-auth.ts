import * as v from 'valibot';
import { createHash, timingSafeEqual } from 'node:crypto';
import { defineStep } from './step.js';
import { headerSafe, stepError } from './reply.js';
import { formatQuery, pairsOf } from '../shared/url-query.js';
import { credentialScanner, withoutSegments } from '../shared/query-credential.js';

/**
 * API keys from a header (or a query parameter), checked against SHA-256 fingerprints in
 * the settings: no plaintext key is ever stored. The consumer id goes upstream in
 * `consumerHeader`; the credential itself is removed before proxying unless kept. The
 * query is read as every upstream might read it (query-credential.ts): a key that more
 * than one pair could be read as, or a header and a query key that differ, is refused, so
 * no upstream can read a key other than the one checked.
 */
export const keyAuth = defineStep({
  code: 'key-auth',
  summary: 'Require an API key (header or query), checked against SHA-256 fingerprints',
  details:
    'With `query`, every pair a common upstream parser could read as that parameter counts: names decoded (`api%5Fkey`, and .NET\'s `api%u005Fkey`), in any case (nginx\'s `$arg_`), as PHP\'s `$_GET` registers them (`api.key`, `api key`, `api_key[]`, `api[key`, `api_key%00x`), and pairs inside a `;`-joined one (Rack, Go before 1.17). ' +
    'A request where the key comes more than once (two such pairs, two header lines, or a query key beside a different header key), or inside a `;`-joined pair, is refused with 400 `Svc.Data.AmbiguousCredential`. ' +
    'Unless `keepCredential`, the header and every such pair are removed before proxying; with it, the one key checked goes upstream as sent.',
  statuses: [
    { status: 401, when: 'no key, or a key whose SHA-256 is not listed' },
    { status: 400, when: 'the key comes more than once, or in a pair upstreams split differently (Svc.Data.AmbiguousCredential)' },
  ],
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
  create(s, { state }) {
    const header = s.header.toLowerCase();
    const keys = s.keys.map((k) => ({ id: k.id, digest: Buffer.from(k.sha256, 'hex') }));
    const idHeader = new Map(s.keys.map((k) => [k.id, headerSafe(k.id)]));
    const unauthorized = stepError('Svc.Data.Unauthenticated', 'A valid API key is required', { 'www-authenticate': `ApiKey header="${header}"` });
    const ambiguous = stepError('Svc.Data.AmbiguousCredential', `The API key must come once: one ${header} header or one ${s.query ? `${s.query} query parameter` : 'header line'}, not both with different values`);
    const scan = s.query ? credentialScanner(s.query) : null;
    // Accepted key -> consumer, so a repeat caller skips the hash. In memory only, kept
    // across publishes while the step is unchanged (it goes when the settings change), and
    // only keys that matched: at most one entry per configured key, so refused keys (any
    // number, any size) cost no memory.
    const seen = state(() => new Map<string, string>());
    const lookup = (presented: string): string | null => {
      const digest = createHash('sha256').update(presented).digest();
      let consumer: string | null = null;
      for (const k of keys) if (timingSafeEqual(k.digest, digest) && consumer === null) consumer = k.id;
      if (consumer !== null) seen.set(presented, consumer);
      return consumer;
    };
    return (flow) => {
      const req = flow.req;
      const lines = headerLines(req.headers, header);
      if (lines > 1) return ambiguous;
      const fromHeader = lines === 1 ? req.header(header) : undefined;
      // The query as it goes upstream (an earlier step may have changed it), read only on
      // routes that take the key there; the client's own is parsed once per request.
      const q = flow.query;
      const pairs = scan === null || q === null ? null : pairsOf(q, req);
      const inQuery = pairs === null ? null : scan!(pairs);
      if (inQuery !== null && (inQuery.ambiguous || (fromHeader !== undefined && inQuery.value !== null && inQuery.value !== fromHeader))) return ambiguous;
      const presented = fromHeader ?? inQuery?.value ?? undefined;
      if (!presented) return unauthorized;
      const consumer = seen.get(presented) ?? lookup(presented);
      if (consumer === null) return unauthorized;
      flow.vars.consumer = consumer;
      flow.setHeader(s.consumerHeader, idHeader.get(consumer)!);
      if (!s.keepCredential) {
        flow.removeHeader(header);
        // Every pair any upstream could read as the key goes; the others keep their bytes.
        if (inQuery !== null && inQuery.segments.length > 0) flow.query = formatQuery(withoutSegments(pairs!, inQuery.segments));
      }
      return undefined;
    };
  },
});

/** How many lines of header `name` (lower case) the request has. */
function headerLines(headers: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) n++;
  return n;
}
