import * as v from 'valibot';
import { defineStep } from './step.js';
import { stepError } from './reply.js';

/**
 * Refuses request bodies over `maxBytes` with 413: at once from a Content-Length, and for
 * a chunked body (no Content-Length) by counting it as it streams: past the cap the
 * upstream request is cut and the client gets 413.
 */
export const requestSizeLimit = defineStep({
  code: 'request-size-limit',
  summary: 'Refuse request bodies larger than maxBytes (413)',
  statuses: [{ status: 413, when: 'Content-Length is over maxBytes, or a chunked body grows past it' }],
  example: { maxBytes: 1048576 },
  schema: v.strictObject({ maxBytes: v.pipe(v.number(), v.integer(), v.minValue(0)) }),
  create(s) {
    const tooLarge = stepError('Svc.Data.TooLarge', `The request body exceeds ${s.maxBytes} bytes`, { connection: 'close' });
    return (flow) => {
      const cl = flow.req.header('content-length');
      if (cl !== undefined) return Number(cl) > s.maxBytes ? tooLarge : undefined;
      if (flow.req.header('transfer-encoding') !== undefined) flow.limitBody(s.maxBytes);
      return undefined;
    };
  },
});
