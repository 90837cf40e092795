import { parseQuery, semicolonPairs, type QueryPair } from './url-query.js';

/** What a redacted value is written as, in every log. */
export const REDACTED = '[redacted]';

/**
 * The query with the values of the pairs `secret` picks replaced by `[redacted]`; the rest
 * as sent. `secret` judges a pair as upstreams read it (credentialNames: `api%5Fkey`,
 * `api.key`, `api_key[]` are `api_key`); `pairs` is the request's parsed query when it has one.
 */
export function redactQuery(query: string, secret: (p: QueryPair) => boolean, pairs: readonly QueryPair[] = parseQuery(query)): string {
  let out = '';
  for (let i = 0; i < pairs.length; i++) {
    if (i > 0) out += '&';
    // `;` separates pairs too for many servers (Rack, older Python and Go): each part is
    // judged, and the separators stay as sent.
    const parts = semicolonPairs(pairs[i]!);
    for (let j = 0; j < parts.length; j++) {
      if (j > 0) out += ';';
      const p = parts[j]!;
      const eq = p.raw.indexOf('=');
      out += eq !== -1 && secret(p) ? `${p.raw.slice(0, eq)}=${REDACTED}` : p.raw;
    }
  }
  return out;
}
