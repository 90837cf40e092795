import * as v from 'valibot';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineStep, type CollectedAnswer } from './step.js';

/**
 * Compresses answers with brotli or gzip, as the client's Accept-Encoding prefers
 * (brotli first), when the answer is not already encoded, its type is listed, and its
 * size is between minBytes and maxBytes (larger answers stream uncompressed).
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
  create(s) {
    const typeOk = (t: string | undefined) => t !== undefined && s.types.some((p) => t.toLowerCase().startsWith(p));
    return (flow) => {
      const accept = (flow.req.header('accept-encoding') ?? '').toLowerCase();
      const encoding = s.encodings.find((e) => new RegExp(`(^|[,\\s])${e}(;q=(?!0(\\.0*)?\\b)[\\d.]+)?(\\s*,|\\s*$)`).test(accept));
      if (!encoding) return undefined;
      flow.collectResponse(s.maxBytes, (a: CollectedAnswer) => {
        const get = (n: string) => a.headers.find(([k]) => k === n)?.[1];
        if (a.body.length < s.minBytes || get('content-encoding') !== undefined || !typeOk(get('content-type'))) return a;
        const body =
          encoding === 'br'
            ? brotliCompressSync(a.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: a.body.length } })
            : gzipSync(a.body, { level: 6 });
        const vary = get('vary');
        const headers = a.headers.filter(([k]) => k !== 'vary' && k !== 'etag');
        headers.push(['content-encoding', encoding], ['vary', vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding']);
        return { status: a.status, headers, body };
      });
      return undefined;
    };
  },
});
