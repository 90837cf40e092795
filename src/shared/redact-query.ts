import { parseQuery, semicolonPairs, type QueryPair } from './url-query.js';

/** What a redacted value is written as, in every log. */
export const REDACTED = '[redacted]';

/**
 * The query with the values of the parameters `secret` names replaced by `[redacted]`; the
 * rest as sent. Names are judged as upstreams read them (url-query.ts: decoded, `+` as a
 * space), so `api%5Fkey` is `api_key`; `pairs` is the request's parsed query when it has one.
 */
export function redactQuery(query: string, secret: (name: string) => boolean, pairs: readonly QueryPair[] = parseQuery(query)): string {
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
      out += eq !== -1 && secret(p.name) ? `${p.raw.slice(0, eq)}=${REDACTED}` : p.raw;
    }
  }
  return out;
}
