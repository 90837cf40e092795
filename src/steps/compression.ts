import * as v from 'valibot';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineStep, headerListOf, type CollectedAnswer } from './step.js';

/**
 * Compresses answers with brotli or gzip, as the client's Accept-Encoding prefers (by q;
 * ties: the order of `encodings`), when the answer is not already encoded, not partial
 * (206, Content-Range), not marked no-transform, its type is listed, and its size is
 * between minBytes and maxBytes (larger answers stream uncompressed).
 */
export const compression = defineStep({
  code: 'compression',
  summary: 'Compress answers with brotli or gzip by Accept-Encoding (size and type bounds)',
  statuses: [],
  example: { minBytes: 1024, types: ['text/', 'application/json'] },
  schema: v.strictObject({
    encodings: v.optional(v.array(v.picklist(['br', 'gzip'])), ['br', 'gzip']),
    minBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 1024),
    maxBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64 * 1024 * 1024)), 4 * 1024 * 1024),
    types: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), ['text/', 'application/json', 'application/javascript', 'application/xml', 'image/svg+xml']),
  }),
  touchesBody: 'rewrites the response body',
  create(s) {
    const typeOk = (t: string | undefined) => t !== undefined && s.types.some((p) => t.toLowerCase().startsWith(p));
    return (flow) => {
      const encoding = preferred(flow.req.header('accept-encoding'), s.encodings);
      if (encoding === null) return undefined;
      flow.collectResponse(s.maxBytes, (a: CollectedAnswer) => {
        const get = (n: string) => a.headers.find(([k]) => k === n)?.[1];
        if (a.body.length < s.minBytes || get('content-encoding') !== undefined || !typeOk(get('content-type'))) return a;
        // A part of a body (its Content-Range counts plain bytes), or an answer the origin
        // forbids proxies to transform (RFC 9110 §7.7), goes as it is.
        if (a.status === 206 || get('content-range') !== undefined || /\bno-transform\b/i.test(headerListOf(a.headers, 'cache-control'))) return a;
        const body =
          encoding === 'br'
            ? brotliCompressSync(a.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: a.body.length } })
            : gzipSync(a.body, { level: 6 });
        // Every Vary line the upstream sent, as one list, plus ours.
        const vary = headerListOf(a.headers, 'vary');
        const headers = a.headers.filter(([k]) => k !== 'vary' && k !== 'etag');
        headers.push(['content-encoding', encoding], ['vary', vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding']);
        return { status: a.status, headers, body };
      });
      return undefined;
    };
  },
});

/**
 * The coding to use for an Accept-Encoding (RFC 9110 §12.5.3): among `offered`, the
 * one with the highest q (a `*` entry covers the codings not named; q=0 refuses), ties
 * going to the first offered; null for none.
 */
export function preferred(accept: string | undefined, offered: readonly string[]): string | null {
  if (!accept) return null;
  const q = new Map<string, number>();
  for (const part of accept.split(',')) {
    const [name, ...params] = part.split(';');
    const coding = name!.trim().toLowerCase();
    if (!coding) continue;
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) weight = Number(m[1]);
    }
    q.set(coding, Number.isFinite(weight) ? weight : 0);
  }
  let best: string | null = null;
  let bestQ = 0;
  for (const coding of offered) {
    const w = q.get(coding) ?? q.get('*') ?? 0;
    if (w > bestQ) {
      best = coding;
      bestQ = w;
    }
  }
  return best;
}
