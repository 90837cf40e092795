import * as v from 'valibot';
import { uuidV4 } from '../shared/uuid.js';
import { WELL_FORMED_REQUEST_ID } from '../shared/trace-id.js';
import { defineStep, type ResponseHead } from './step.js';

/** Gives every request an id (keeping a well-formed incoming one if asked), sends it upstream and echoes it. */
export const requestId = defineStep({
  code: 'request-id',
  summary: 'Keep a well-formed incoming request id for this route, or send the request id in another header',
  details: 'Every request has an id already (worker.json `requestId`): with this step the route keeps a well-formed incoming id (`keepIncoming`) as the request\'s id, and, when `header` is not worker.json\'s header, also sends the id upstream in `header` and echoes it there (`echo`). With worker.json\'s `requestId.enabled` false, the step makes the id itself.',
  statuses: [],
  example: { header: 'x-request-id', keepIncoming: true, echo: true },
  schema: v.strictObject({
    header: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/)), 'x-request-id'),
    keepIncoming: v.optional(v.boolean(), true),
    echo: v.optional(v.boolean(), true),
  }),
  create(s) {
    const name = s.header.toLowerCase();
    // The echoed id replaces the upstream's own copy (many frameworks echo it too), and a
    // cached answer's, which holds another request's id: one header, this request's id.
    const dropTheirs = (head: ResponseHead): void => {
      if (head.headers.some(([k]) => k === name)) head.headers = head.headers.filter(([k]) => k !== name);
    };
    return (flow) => {
      const req = flow.req;
      const incoming = s.keepIncoming ? req.header(name) : undefined;
      const kept = incoming !== undefined && WELL_FORMED_REQUEST_ID.test(incoming) ? incoming : undefined;
      // This route trusts the incoming id: it becomes the request's id (log, envelopes, worker.json's header).
      if (kept !== undefined && req.requestIdHeader !== null) req.setRequestId(req.requestIdHeader, kept);
      const id = kept ?? (req.requestId || uuidV4());
      flow.vars.requestId = id;
      // worker.json's request id travels in this very header, both ways, already.
      if (name === req.requestIdHeader) return undefined;
      flow.setHeader(name, id);
      if (s.echo) {
        flow.onResponse(dropTheirs);
        flow.addResponseHeader(name, id);
      }
      return undefined;
    };
  },
});
