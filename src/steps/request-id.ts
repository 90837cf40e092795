import * as v from 'valibot';
import { uuidV4 } from '../shared/uuid.js';
import { defineStep, type ResponseHead } from './step.js';

/** Gives every request an id (keeping a well-formed incoming one if asked), sends it upstream and echoes it. */
export const requestId = defineStep({
  code: 'request-id',
  summary: 'Generate or keep a request id, pass it upstream and echo it in the response',
  statuses: [],
  example: { header: 'x-request-id', keepIncoming: true, echo: true },
  schema: v.strictObject({
    header: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/)), 'x-request-id'),
    keepIncoming: v.optional(v.boolean(), true),
    echo: v.optional(v.boolean(), true),
  }),
  create(s) {
    const name = s.header.toLowerCase();
    const ok = /^[A-Za-z0-9._:-]{1,128}$/;
    // The echoed id replaces the upstream's own copy (many frameworks echo it too), and a
    // cached answer's, which holds another request's id: one header, this request's id.
    const dropTheirs = (head: ResponseHead): void => {
      if (head.headers.some(([k]) => k === name)) head.headers = head.headers.filter(([k]) => k !== name);
    };
    return (flow) => {
      const incoming = s.keepIncoming ? flow.req.header(name) : undefined;
      const id = incoming !== undefined && ok.test(incoming) ? incoming : uuidV4();
      flow.setHeader(name, id);
      flow.vars.requestId = id;
      if (s.echo) {
        flow.onResponse(dropTheirs);
        flow.addResponseHeader(name, id);
      }
      return undefined;
    };
  },
});
