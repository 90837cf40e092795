import * as v from 'valibot';
import { defineStep } from './step.js';

const Ms = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3_600_000));

/**
 * Per-route upstream timeouts, overriding the cluster's: time to the response headers
 * (504 when exceeded) and the longest pause between body chunks. The connect timeout
 * belongs to the cluster's connection pool (`timeouts.connectMs`).
 */
export const timeout = defineStep({
  code: 'timeout',
  summary: "Override the cluster's response-headers and body timeouts for this route (504)",
  details: 'Needs `headersMs`, `bodyMs` or both. `headersMs` runs from the moment the request is fully sent; under 10 s it is kept to the millisecond, above that to about a second (undici\'s clock). `bodyMs` (the longest pause between body chunks) always has about a second\'s resolution.',
  statuses: [{ status: 504, when: 'the upstream headers do not arrive within headersMs' }],
  example: { headersMs: 2000, bodyMs: 10000 },
  schema: v.pipe(
    v.strictObject({ headersMs: v.optional(Ms), bodyMs: v.optional(Ms) }),
    v.check((s) => s.headersMs !== undefined || s.bodyMs !== undefined, 'needs headersMs or bodyMs'),
  ),
  create(s) {
    const t = { ...(s.headersMs !== undefined ? { headersMs: s.headersMs } : {}), ...(s.bodyMs !== undefined ? { bodyMs: s.bodyMs } : {}) };
    return (flow) => {
      flow.timeouts = t;
      return undefined;
    };
  },
});
