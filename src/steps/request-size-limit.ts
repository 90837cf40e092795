import * as v from 'valibot';
import { defineStep } from './step.js';
import { stepError } from './reply.js';

/**
 * Refuses request bodies over `maxBytes` with 413, from their Content-Length. A chunked
 * body (no Content-Length) is refused unless `allowChunked`: its size is only known as
 * it streams, which this step does not yet count.
 */
export const requestSizeLimit = defineStep({
  code: 'request-size-limit',
  summary: 'Refuse request bodies larger than maxBytes (413)',
  statuses: [{ status: 413, when: 'Content-Length is over maxBytes' }, { status: 411, when: 'a chunked body without allowChunked' }],
  example: { maxBytes: 1048576 },
  schema: v.strictObject({
    maxBytes: v.pipe(v.number(), v.integer(), v.minValue(0)),
    allowChunked: v.optional(v.boolean(), false),
  }),
  create(s) {
    const tooLarge = stepError(413, 'Svc.Data.TooLarge', `The request body exceeds ${s.maxBytes} bytes`, { connection: 'close' });
    const lengthRequired = stepError(411, 'Svc.Data.LengthRequired', 'A Content-Length is required on this route');
    return (flow) => {
      const cl = flow.req.header('content-length');
      if (cl !== undefined) return Number(cl) > s.maxBytes ? tooLarge : undefined;
      if (flow.req.header('transfer-encoding') !== undefined && !s.allowChunked) return lengthRequired;
      return undefined;
    };
  },
});
