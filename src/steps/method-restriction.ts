import * as v from 'valibot';
import { defineStep } from './step.js';
import { stepError } from './reply.js';

/** Only the listed methods pass; others get 405 with Allow. */
export const methodRestriction = defineStep({
  code: 'method-restriction',
  summary: 'Allow only the listed methods (405 with Allow otherwise)',
  statuses: [{ status: 405, when: 'the method is not allowed (Allow lists the allowed ones)' }],
  example: { allow: ['GET', 'HEAD'] },
  schema: v.strictObject({ allow: v.pipe(v.array(v.pipe(v.string(), v.regex(/^[A-Z]+$/, 'must be an upper-case method'))), v.minLength(1)) }),
  create(s) {
    const allowed = new Set(s.allow);
    const reply = stepError('Svc.Data.MethodNotAllowed', `Method not allowed; allowed: ${s.allow.join(', ')}`, { allow: s.allow.join(', ') });
    return (flow) => (allowed.has(flow.req.method) ? undefined : reply);
  },
});
